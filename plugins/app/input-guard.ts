/**
 * What every request's parsed input (path parameters, query string, JSON body) must be before a
 * schema or a query sees it, whatever the route: text PostgreSQL can store as given, in a shape
 * whose checking costs bounded work. Pure, and iterative: a body nested thousands deep is walked
 * without recursion.
 */

export interface InputProblem {
  /** JSON pointer of the offending value, `/` for the root. */
  path: string;
  message: string;
}

export const INPUT_LIMITS = {
  /** No body of this API nests deeper than a few levels. */
  maxDepth: 32,
  /** Bodies have at most a dozen fields; thousands of unknown ones are an attack, not a typo. */
  maxKeysPerObject: 100,
  /** Strings, numbers, objects and arrays in one input. */
  maxValues: 10_000,
} as const;

/** Why a string cannot be stored as text as given, if it cannot. */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  // A lone surrogate (JSON allows "\ud800") would reach PostgreSQL as U+FFFD: another text.
  if (!value.isWellFormed()) return 'must be well-formed Unicode (it holds a lone surrogate)';
  return undefined;
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The first problem in `value`, depth first, or undefined when it is fine. */
export function findInputProblem(value: unknown, limits = INPUT_LIMITS): InputProblem | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  let values = 0;
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown; path: string; depth: number };
    const path = item.path || '/';
    if (++values > limits.maxValues)
      return { path: '/', message: `holds too many values (more than ${limits.maxValues})` };
    if (typeof item.value === 'string') {
      const problem = textProblem(item.value);
      if (problem) return { path, message: problem };
      continue;
    }
    // Raw bytes (the one route that keeps its raw body checks them itself, by signature).
    if (!item.value || typeof item.value !== 'object' || Buffer.isBuffer(item.value)) continue;
    if (item.depth >= limits.maxDepth)
      return { path, message: `is nested too deeply (more than ${limits.maxDepth} levels)` };
    const entries = Object.entries(item.value);
    if (!Array.isArray(item.value) && entries.length > limits.maxKeysPerObject) {
      return { path, message: `has too many fields (${entries.length}; at most ${limits.maxKeysPerObject})` };
    }
    // Pushed in reverse, so the first field is looked at first.
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, child] = entries[index] as [string, unknown];
      const childPath = `${item.path}/${escapePointer(key)}`;
      const keyProblem = textProblem(key);
      if (keyProblem) return { path: childPath, message: `has a field name that ${keyProblem}` };
      stack.push({ value: child, path: childPath, depth: item.depth + 1 });
    }
  }
  return undefined;
}

/**
 * Why a body sent to a route that declares none is refused, if it is: such a route would ignore
 * every field of it, as a strict body schema refuses unknown ones. An empty object (`{}`, what some
 * clients send by default) says nothing and passes; raw bytes are the business of the route that
 * keeps them.
 */
export function undeclaredBodyProblem(body: unknown): InputProblem | undefined {
  if (body === undefined || Buffer.isBuffer(body)) return undefined;
  const emptyObject =
    body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
  return emptyObject ? undefined : { path: '/', message: 'must be empty: this endpoint takes no body' };
}
