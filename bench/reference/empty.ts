/** For scale beside the references: a handler with no imports (what Node's loading of a module costs). */
export const handler = async () => ({ statusCode: 204 });
