import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

/** A tiny history router under /admin: paths are relative to the base ("/", "/users", "/sessions/abc"). */
export const BASE = '/admin';
const RouterContext = createContext<{ path: string; query: URLSearchParams; navigate(to: string): void }>({
  path: '/',
  query: new URLSearchParams(),
  navigate: () => undefined,
});

function current(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return p === '' ? '/' : p;
}

export function Router({ children }: { children: ReactNode }) {
  const [state, setState] = useState(() => ({ path: current(), search: location.search }));
  useEffect(() => {
    const on = () => setState({ path: current(), search: location.search });
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const navigate = (to: string) => {
    history.pushState(null, '', BASE + to);
    setState({ path: current(), search: location.search });
    window.scrollTo(0, 0);
  };
  return <RouterContext.Provider value={{ path: state.path, query: new URLSearchParams(state.search), navigate }}>{children}</RouterContext.Provider>;
}

export const useRouter = () => useContext(RouterContext);

export function Link({ to, children, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const { path, navigate } = useRouter();
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    rest.onClick?.(e);
    navigate(to);
  };
  const active = to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`);
  return (
    <a href={BASE + to} aria-current={active ? 'page' : undefined} {...rest} onClick={onClick}>
      {children}
    </a>
  );
}
