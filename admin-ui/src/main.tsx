import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { applyTheme } from './lib/theme';
import { AuthProvider } from './lib/auth';
import { Router } from './lib/router';
import { App } from './features/shell/app';

applyTheme();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <AuthProvider>
      <Router>
        <App />
      </Router>
    </AuthProvider>
  </StrictMode>,
);
