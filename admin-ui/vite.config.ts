import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the Muninn server at /admin. `npm run dev -w admin-ui` proxies GraphQL to a local server.
const target = process.env.MUNINN_URL ?? 'http://127.0.0.1:4000';

export default defineConfig({
  base: '/admin/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800 },
  server: { proxy: { '/graphql': { target, ws: true }, '/readyz': { target }, '/uploads': { target } } },
});
