/** Cold-start reference: a handler with no imports (what Node itself costs). */
export const handler = async () => ({ statusCode: 204 });
