import { isOwnWrite, WRITE_TOKEN_WINDOW_MS } from '../../shared/domain/writes';

describe("a write recognised as a request's own", () => {
  const at = '2026-11-25T12:00:00.000Z';
  const after = (ms: number) => new Date(Date.parse(at) + ms);

  it("is one made under the same token, within the Idempotency-Key's 24 hours", () => {
    expect(isOwnWrite({ writeToken: 'idem_a' }, 'idem_a', at, after(60_000))).toBe(true);
    expect(isOwnWrite({ writeToken: 'idem_a' }, 'idem_a', at, after(WRITE_TOKEN_WINDOW_MS - 1))).toBe(true);
  });

  it('is not one after the window (the key may be used afresh), under another token, or without one', () => {
    expect(isOwnWrite({ writeToken: 'idem_a' }, 'idem_a', at, after(WRITE_TOKEN_WINDOW_MS))).toBe(false);
    expect(isOwnWrite({ writeToken: 'idem_a' }, 'idem_b', at, after(1))).toBe(false);
    expect(isOwnWrite({}, undefined, at, after(1))).toBe(false);
    expect(isOwnWrite({ writeToken: 'idem_a' }, 'idem_a', null, after(1))).toBe(false);
  });
});
