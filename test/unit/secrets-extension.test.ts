import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { secretFromExtension } from '../../shared/aws/secrets-extension';
import { ConfigError, configFromEnv } from '../../shared/config';
import { cursorDeps } from '../../shared/wiring/api';

const ARN = 'arn:aws:secretsmanager:us-east-1:1:secret:CursorKey-abc';
const TOKEN = 'session-token-of-the-function';
const KEY = 'k'.repeat(40);

/** Stands in for the Parameters and Secrets extension on a free loopback port: it answers only with the function's token. */
let server: Server;
let port: number;
let seen: IncomingMessage[];
let status: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req);
    const url = new URL(req.url ?? '', 'http://localhost');
    if (req.headers['x-aws-parameters-secrets-token'] !== TOKEN) return void res.writeHead(401).end('unauthorized');
    if (url.pathname !== '/secretsmanager/get' || url.searchParams.get('secretId') !== ARN)
      return void res.writeHead(400).end('bad request');
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ARN, Name: 'CursorKey', SecretString: KEY }));
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen = [];
  status = 200;
});

describe('a secret through the Parameters and Secrets extension (shared/aws/secrets-extension.ts)', () => {
  it("returns the secret's string, asking with the function's session token", async () => {
    await expect(secretFromExtension(ARN, { port, token: TOKEN })).resolves.toBe(KEY);
    expect(seen).toHaveLength(1);
  });

  it('fails, naming the secret, when the extension refuses or has no answer', async () => {
    await expect(secretFromExtension(ARN, { port, token: 'not-ours' })).rejects.toThrow(`answered 401 for ${ARN}`);
    status = 500;
    await expect(secretFromExtension(ARN, { port, token: TOKEN })).rejects.toThrow(`answered 500 for ${ARN}`);
  });

  it('signs cursors with the key it reads once per container, and reads again after a failure', async () => {
    const config = configFromEnv({
      CURSOR_SECRET_ARN: ARN,
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port),
      AWS_SESSION_TOKEN: TOKEN,
    });
    status = 503;
    await expect(cursorDeps(config).cursorKey()).rejects.toThrow('answered 503');
    status = 200;
    const key = await cursorDeps(config).cursorKey();
    expect(key.toString('utf8')).toBe(KEY);
    await cursorDeps(config).cursorKey();
    expect(seen).toHaveLength(2);
  });
});

describe('the cursor key in the config (shared/config.ts)', () => {
  it('is given locally, and read through the extension where CURSOR_SECRET_ARN is set', () => {
    expect(configFromEnv({ CURSOR_SECRET: KEY }).cursor).toEqual({ secret: KEY });
    expect(configFromEnv({ CURSOR_SECRET_ARN: ARN, AWS_SESSION_TOKEN: TOKEN }).cursor).toEqual({
      secretArn: ARN,
      extension: { port: 2773, token: TOKEN },
    });
    expect(() => configFromEnv({ CURSOR_SECRET_ARN: ARN }).cursor).toThrow(
      new ConfigError('AWS_SESSION_TOKEN is not set (the Parameters and Secrets extension)'),
    );
    expect(() => configFromEnv({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: 'x' })).toThrow(
      /PARAMETERS_SECRETS_EXTENSION_HTTP_PORT must be a port number/,
    );
  });
});
