/** A tiny element builder: h('td', { class: 'num' }, '12'). Text is always set as text, never HTML. */
export type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | ((event: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false) element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'number' ? String(child) : child);
  }
  return element;
}

export function mount(target: HTMLElement, ...children: Child[]): void {
  target.replaceChildren();
  for (const child of children)
    if (child !== null && child !== undefined && child !== false)
      target.append(typeof child === 'number' ? String(child) : child);
}

/** A notice that says what happened and what to do. */
export function notice(kind: 'error' | 'empty', title: string, ...body: Child[]): HTMLElement {
  return h(
    'div',
    { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': `notice-${kind}` },
    h('strong', {}, title),
    h('div', {}, ...body),
  );
}

/** A box that scrolls sideways on its own, so a wide table never widens the page (phones). */
export function scrollBox(...children: Child[]): HTMLElement {
  return h('div', { class: 'scroll' }, ...children);
}
