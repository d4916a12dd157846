import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DynamoDB Local has no option for the address it listens on (`-help` lists -port, -inMemory,
 * -dbPath, -sharedDb, -cors, -delayTransientStatuses, -optimizeDbBeforeStartup,
 * -disableTelemetry): its Jetty server is built with a port only, so it listens on every
 * interface. This launcher builds the server as DynamoDB Local's own main does, sets its
 * connector's host to 127.0.0.1 before it starts, then starts it: the table is reachable from
 * this machine only, as the API is. It reads one private field (`server`) of the pinned
 * version (the cache folder names it); a change there fails the start, loudly.
 */
export const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';

const SOURCE = `import java.lang.reflect.Field;
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class ${LAUNCHER_CLASS} {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
  }
}
`;

/** The modules this Java has (`java --list-modules`); also proves that Java runs at all. */
export function javaModules(): string | null {
  try {
    return execFileSync('java', ['--list-modules'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

/**
 * The class path that runs DynamoDB Local on loopback (main class LAUNCHER_CLASS), compiled
 * once into `cache` beside the emulator; null when this Java cannot compile it (a runtime
 * without the jdk.compiler module): the caller then runs the plain jar.
 */
export function loopbackClassPath(emulator: string, cache: string, modules: string): string | null {
  const jar = join(emulator, 'DynamoDBLocal.jar');
  const dir = join(cache, `loopback-${createHash('sha256').update(SOURCE).digest('hex').slice(0, 12)}`);
  const classPath = `${dir}:${jar}`; // the jar's manifest names its libraries
  if (existsSync(join(dir, `${LAUNCHER_CLASS}.class`))) return classPath;
  if (!/^jdk\.compiler@/m.test(modules)) return null;
  // Compiled in a scratch folder and renamed into place, as the emulator is fetched (./dynamodb-jar.ts).
  const scratch = mkdtempSync(join(cache, 'loopback-build-'));
  try {
    const source = join(scratch, `${LAUNCHER_CLASS}.java`);
    writeFileSync(source, SOURCE);
    // javac is a module of the runtime (a JRE without the javac command has it too).
    execFileSync(
      'java',
      ['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '-d', scratch, '-cp', jar, source],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    try {
      renameSync(scratch, dir);
    } catch (err) {
      if (!existsSync(join(dir, `${LAUNCHER_CLASS}.class`))) throw err; // else another start compiled it meanwhile
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return classPath;
}
