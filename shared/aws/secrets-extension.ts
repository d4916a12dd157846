import { get } from 'node:http';

/**
 * A secret's string through the AWS Parameters and Secrets Lambda Extension: a layer that
 * serves (and caches) Secrets Manager reads on localhost, so the function bundles no Secrets
 * Manager client. The extension answers only callers that present the function's session
 * token. Its answer is GetSecretValue's, as JSON.
 */
export function secretFromExtension(
  secretId: string,
  extension: { port: number; token: string },
  timeoutMs = 5_000,
): Promise<string> {
  const path = `/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`;
  return new Promise((resolve, reject) => {
    const request = get(
      {
        host: 'localhost',
        port: extension.port,
        path,
        headers: { 'X-Aws-Parameters-Secrets-Token': extension.token },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          if (res.statusCode !== 200)
            return reject(new Error(`the Parameters and Secrets extension answered ${res.statusCode} for ${secretId}`));
          try {
            const secret = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SecretString?: unknown })
              .SecretString;
            if (typeof secret !== 'string') throw new Error('no SecretString');
            resolve(secret);
          } catch (err) {
            reject(
              new Error(`the Parameters and Secrets extension's answer for ${secretId} has no SecretString`, {
                cause: err,
              }),
            );
          }
        });
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error(`the Parameters and Secrets extension did not answer within ${timeoutMs} ms`)),
    );
    request.on('error', reject);
  });
}
