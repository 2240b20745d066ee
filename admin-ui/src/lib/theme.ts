/** Light or dark: the stored choice, or the system's (followed live) when the choice is "system". */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'muninn.theme';
const media = window.matchMedia('(prefers-color-scheme: dark)');

export function storedTheme(): ThemeChoice {
  const v = localStorage.getItem(KEY);
  return v === 'light' || v === 'dark' ? v : 'system';
}

export function applyTheme(choice: ThemeChoice = storedTheme()): void {
  localStorage.setItem(KEY, choice);
  const dark = choice === 'dark' || (choice === 'system' && media.matches);
  document.documentElement.setAttribute('data-theme', dark ? 'dark' : 'light');
}

media.addEventListener('change', () => applyTheme());
