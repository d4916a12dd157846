import { formatTime } from './time.js';

/**
 * The only way this page builds DOM: elements, attributes set one by one and text as text
 * nodes. Nothing here parses a string as markup, so a receiver's answer (attacker-controlled)
 * is always shown as the characters it is.
 */
export function h(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

/** The same for SVG (the stats chart). */
export function svg(tag, props = {}, ...children) {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), props, children);
}

function build(el, props, children) {
  for (const [name, value] of Object.entries(props)) {
    if (name.startsWith('on')) {
      // Handlers are functions only: a string would be an inline script (and CSP blocks those).
      if (typeof value !== 'function') throw new TypeError(`${name} must be a function`);
      el.addEventListener(name.slice(2), value);
    } else if (value === true) {
      el.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      el.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return el;
}

/** Replaces an element's content. */
export function show(el, ...children) {
  el.replaceChildren();
  for (const c of children.flat()) if (c) el.append(c);
}

/** A date as the reader's local time (portal/time.js), with the exact UTC instant in a tooltip. */
export function when(iso) {
  if (!iso) return h('span', {}, '—');
  return h('time', { datetime: iso, title: iso }, formatTime(iso));
}

let seq = 0;
/** A unique id for label/for pairs. */
export const uid = (prefix) => `${prefix}-${++seq}`;
