import { useEffect, useState } from 'react';
import { useAuth } from '../../lib/auth';
import { Link, useRouter } from '../../lib/router';
import { trustAtLeast } from '../../lib/trust';
import { Badge, Empty, Loading, ThemeToggle } from '../../components/ui';
import { SignInPage } from '../sign-in/sign-in.page';
import { PAGES, type PageDef } from './pages';

function match(path: string): { page: PageDef; params: string[] } | null {
  for (const page of PAGES) {
    if (page.path === '/' ? path === '/' : path === page.path || path.startsWith(`${page.path}/`)) {
      const rest = path.slice(page.path.length).split('/').filter(Boolean).map(decodeURIComponent);
      return { page, params: rest };
    }
  }
  return null;
}

export function App() {
  const { me, checking, signOut } = useAuth();
  const { path, navigate } = useRouter();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    setMenuOpen(false);
  }, [path]);
  // Members land on their chat: the overview needs ADMIN.
  useEffect(() => {
    if (me && path === '/' && !trustAtLeast(me.trust, 'ADMIN')) navigate('/chat');
  }, [me, path, navigate]);
  if (checking) return <Loading label="Checking your token…" />;
  if (!me) return <SignInPage />;
  const visible = PAGES.filter((p) => trustAtLeast(me.trust, p.minTrust));
  const m = match(path);
  const sections = ['Assistant', 'Administration'] as const;
  let content;
  if (!m) content = <Empty title="Page not found">This address is not a page of the console.</Empty>;
  else if (!trustAtLeast(me.trust, m.page.minTrust))
    content = (
      <Empty title="Not allowed">
        {m.page.title} needs {m.page.minTrust} trust or higher; you are {me.trust}.
      </Empty>
    );
  else content = <m.page.component params={m.params} />;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <div className="topbar">
        <button className="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen((o) => !o)}>
          ☰ Menu
        </button>
        <strong>Muninn</strong>
      </div>
      <div className="shell">
        <nav id="nav" className={`nav ${menuOpen ? 'open' : ''}`} aria-label="Main">
          <div className="brand">
            <span className="brand-mark" aria-hidden="true">M</span> Muninn
          </div>
          {sections.map((s) => {
            const items = visible.filter((p) => p.section === s);
            if (!items.length) return null;
            return (
              <div key={s}>
                <div className="nav-section">{s}</div>
                {items.map((p) => (
                  <Link key={p.path} to={p.path}>
                    {p.title}
                  </Link>
                ))}
              </div>
            );
          })}
          <div className="nav-foot">
            <div className="who">
              <div>
                <strong>{me.displayName}</strong>
              </div>
              <Badge value={me.trust} />
            </div>
            <ThemeToggle />
            <button onClick={signOut}>Sign out</button>
          </div>
        </nav>
        <main id="main" className="main" tabIndex={-1}>
          {content}
        </main>
      </div>
    </>
  );
}
