import fs from 'fs';
import path from 'path';
import catalog from './datasource/catalog.json';
import { MODE, SETTINGS } from './datasource/settings.gen';
import { FIELD, GROUP_BY, HISTOGRAM, RAW_METRIC, SCORE } from './datasource/catalog.gen';

// The catalog (pkg/measure, pkg/query) and the settings (pkg/datasource) reach the frontend through generated files
// only: catalog.json, catalog.gen.ts and settings.gen.ts. This test reads every other source of the plugin (tests,
// component-test stories and locale files aside) and fails where one writes a query type, measure, latency family,
// score, grouping, histogram form, mode, field list, limit, default or engine-state code by hand.

const SRC = __dirname;
const GENERATED = /(\.gen\.ts|catalog\.json)$/;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      return ['locales', 'ct', 'testdata', 'img'].includes(e.name) ? [] : sources(p);
    }
    return /\.(ts|tsx)$/.test(e.name) && !/\.(test|ct)\.tsx?$/.test(e.name) && !GENERATED.test(e.name) ? [p] : [];
  });
}

const types = new Set(catalog.types.map((t) => t.value));
const measures = new Set(Object.values(catalog.measures).flatMap((m) => m.options.map((o) => o.value)));
const families = new Set(catalog.latencyMetrics.map((f) => f.value));
const rawMetrics = new Set<string>(Object.values(RAW_METRIC));
const scores = new Set<string>(Object.values(SCORE));
const groupings = new Set<string>(Object.values(GROUP_BY));
const fields = new Set<string>(Object.values(FIELD));
const histograms = new Set<string>(Object.values(HISTOGRAM));
const modes = new Set<string>(Object.values(MODE));

/** A quoted literal after a key or comparison: `queryType: 'raw'`, `measure === 'goodput'`. */
function quoted(key: string): RegExp {
  return new RegExp(`\\b${key}\\??\\s*(?::|===?|!==?)\\s*['"\`]([\\w:]+)['"\`]`, 'g');
}

/** The literal checks: each finds a value the generated files define, written by hand. */
const CHECKS: Array<{ what: string; re: RegExp; is: (v: string) => boolean }> = [
  { what: 'query type', re: quoted('queryType'), is: (v) => types.has(v) },
  { what: 'measure', re: quoted('measure'), is: (v) => measures.has(v) },
  { what: 'latency family', re: quoted('metric'), is: (v) => families.has(v) },
  { what: 'raw metric', re: quoted('metric'), is: (v) => rawMetrics.has(v) },
  { what: 'score', re: quoted('score'), is: (v) => scores.has(v) },
  { what: 'grouping', re: quoted('groupBy'), is: (v) => groupings.has(v) },
  { what: 'histogram', re: quoted('histogram'), is: (v) => histograms.has(v) },
  { what: 'mode', re: quoted('mode'), is: (v) => modes.has(v) },
  // Two or more field names in one array literal: a list of fields the catalog gives.
  {
    what: 'field list',
    re: /\[\s*((?:['"]\w+['"]\s*,\s*)+['"]\w+['"])\s*,?\s*\]/g,
    is: (v) => v.split(',').filter((x) => fields.has(x.trim().slice(1, -1))).length >= 2,
  },
  // Numeric object keys or comparisons of a state with 1–3: engine_state's codes.
  { what: 'state code', re: /(?:[{,]\s*([123])\s*:|\bstate\w*\s*[!=<>]=*\s*([123])\b)/gi, is: () => true },
];

// Durations and numbers the settings define: as a literal in a source they are a copy.
const settingValues: Array<string | number> = Object.values(SETTINGS);
const settingStrings = new Set(settingValues.filter((v): v is string => typeof v === 'string'));
// Milliseconds per second, minute and hour convert units wherever durations are read; they are no setting's copy.
const CONVERSIONS = new Set([1000, 60_000, 3_600_000]);
const settingNumbers = new Set(
  settingValues.filter((v): v is number => typeof v === 'number' && v >= 16 && !CONVERSIONS.has(v))
);
const fieldBounds = new Set(
  catalog.fields.flatMap((f) =>
    [f.max, f.maxItems].filter((v): v is number => v !== undefined && v > 1 && v < 1e4 && !CONVERSIONS.has(v))
  )
);
const STRING_LITERAL = /['"`](\d+(?:ms|s|m|h))['"`]/g;
const NUMBER_LITERAL = /(?<![\w.$])(\d[\d_]*(?:\.\d+)?(?:e\d+)?)(?![\w.])/g;

function findings(file: string): string[] {
  const text = fs
    .readFileSync(file, 'utf8')
    // Comments explain; they are not definitions.
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    // Layout sizes are not limits.
    .replace(/\b(?:\w*[wW]idth|height|size|gap)\s*[=:]\s*\{?\s*\d+/g, '');
  const out: string[] = [];
  for (const c of CHECKS) {
    for (const m of text.matchAll(c.re)) {
      const v = m[1] ?? m[2];
      if (c.is(v)) {
        out.push(`${c.what} ${m[0].trim()}`);
      }
    }
  }
  for (const m of text.matchAll(STRING_LITERAL)) {
    if (settingStrings.has(m[1])) {
      out.push(`setting ${m[0]}`);
    }
  }
  // Numbers inside user strings ("1-64 letters") are part of the text.
  const code = text.replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g, "''");
  for (const m of code.matchAll(NUMBER_LITERAL)) {
    const n = Number(m[1].replace(/_/g, ''));
    if (settingNumbers.has(n) || fieldBounds.has(n)) {
      out.push(`limit or default ${m[1]}`);
    }
  }
  return out;
}

describe('sources name the catalog and the settings only through the generated files', () => {
  const files = sources(SRC);

  it('reads the plugin sources', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it.each(files.map((f) => [path.relative(SRC, f), f]))('%s writes none of them by hand', (_, file) => {
    expect(findings(file)).toEqual([]);
  });
});
