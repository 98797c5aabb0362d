import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * Where a V8 CPU profile's time went (a server started by a bench with `--profile DIR`):
 *   tsx bench/profile-summary.ts DIR/CPU.*.cpuprofile [--top 30]
 * Prints the busy time by place (a package, Node's internals, our own files), then the functions
 * with the most time of their own, then those with the most time including what they call.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '30' } },
  allowPositionals: true,
});
const top = Number(values.top);
if (positionals.length !== 1) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [--top 30]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0] as string, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** Microseconds of samples whose top frame is each node. */
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);
/** Where a frame's code lives: a package, Node's internals, one of our files, or V8's own states. */
function placeOf(frame: ProfileNode['callFrame']): string {
  if (IDLE.has(frame.functionName)) return frame.functionName;
  const url = frame.url;
  if (url === '') return '(native)';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1] as string;
  if (url.startsWith('node:')) return 'node internals';
  const ours = /\/dist\/(.*)$/.exec(url);
  return ours ? `ours: ${ours[1]}` : url;
}
const nameOf = (frame: ProfileNode['callFrame']) =>
  `${frame.functionName || '(anonymous)'} ${placeOf(frame)}:${frame.lineNumber + 1}`;

const total = [...selfMicros.values()].reduce((sum, micros) => sum + micros, 0);
const idle = profile.nodes
  .filter((node) => node.callFrame.functionName === '(idle)')
  .reduce((sum, node) => sum + (selfMicros.get(node.id) ?? 0), 0);
const busy = total - idle;
const ms = (micros: number) => (micros / 1000).toFixed(0);
const share = (micros: number) => `${((micros / busy) * 100).toFixed(1)}%`;

function printTable(title: string, rows: Map<string, number>, limit: number): void {
  console.log(`\n${title}\n| | ms | of busy |\n|---|---|---|`);
  for (const [name, micros] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, limit))
    console.log(`| ${name} | ${ms(micros)} | ${share(micros)} |`);
}

const byPlace = new Map<string, number>();
const bySelf = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const node = byId.get(id) as ProfileNode;
  if (node.callFrame.functionName === '(idle)') continue;
  const place = placeOf(node.callFrame);
  byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
  bySelf.set(nameOf(node.callFrame), (bySelf.get(nameOf(node.callFrame)) ?? 0) + micros);
  // Every distinct function on the stack is charged once (recursion counts once).
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const name = nameOf((byId.get(at) as ProfileNode).callFrame);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
}

console.log(
  `profile: ${ms(total)} ms sampled, ${ms(busy)} ms busy (${((busy / total) * 100).toFixed(0)}%), ${ms(idle)} ms idle`,
);
printTable('Busy time by place', byPlace, top);
printTable('Functions by time of their own', bySelf, top);
printTable('Functions by time including their callees', inclusive, top);
