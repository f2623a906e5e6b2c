// What a person would see wrong on a wallboard page, found from element boxes (runs in the page: page.evaluate).

/** Problems a person would see, found from element boxes: clipped or cut-off text, overlapping siblings, anything off-screen. */
export function layoutProblems(oneScreen: boolean): string[] {
  const problems: string[] = [];
  const name = (el: Element) =>
    `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ').join('.')}` : ''}${el.getAttribute('data-field') ? `[${el.getAttribute('data-field')}]` : ''} "${(el.textContent ?? '').trim().slice(0, 30)}"`;
  const visible = (el: Element) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) problems.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
  if (oneScreen && document.documentElement.scrollHeight > innerHeight + 1)
    problems.push(`a wall screen scrolls: ${document.documentElement.scrollHeight} > ${innerHeight}`);
  for (const el of document.body.querySelectorAll('*')) {
    if (!visible(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.left < -0.5 || box.right > width + 0.5)) problems.push(`off-screen: ${name(el)} ${box.left}..${box.right}`);
    // Cut off by a box that hides its overflow (a panel holding more rows than fit).
    // (Boxes only: an inline run's glyph box may overhang its line box, which is not a cut.)
    for (let up = getComputedStyle(el).display === 'inline' ? null : el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflow === 'visible') continue;
      const outer = up.getBoundingClientRect();
      if (box.height > 0 && (box.bottom > outer.bottom + 1 || box.top < outer.top - 1)) problems.push(`cut off: ${name(el)} in ${name(up)}`);
      break;
    }
    const ownText = [...el.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent!.trim());
    if (ownText) {
      let block: Element | null = el;
      while (block && getComputedStyle(block).display === 'inline') block = block.parentElement;
      if (block && block.scrollWidth > block.clientWidth + 1) problems.push(`clipped: ${name(block)} ${block.scrollWidth} > ${block.clientWidth}`);
    }
    const children = [...el.children]
      .filter(visible)
      .map((child) => [child, child.getBoundingClientRect()] as const)
      .filter(([, r]) => r.width > 0.5 && r.height > 0.5);
    for (let i = 0; i < children.length; i += 1) {
      for (let j = i + 1; j < children.length; j += 1) {
        const [a, ra] = children[i];
        const [b, rb] = children[j];
        const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        if (x > 1 && y > 1) problems.push(`overlap: ${name(a)} and ${name(b)}`);
      }
    }
  }
  return problems;
}
