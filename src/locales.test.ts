import fs from 'fs';
import path from 'path';
import { GROUP_BY, LATENCY_METRICS, MEASURES, QUERY_TYPES, VARIABLE_RESOURCES } from './datasource/types';
import { MODES } from './datasource/components/ConfigEditor';
import { HISTOGRAM } from './datasource/components/query/RawSection';
import { LANGUAGES } from './i18n';

// Every user-visible string goes through t()/tf() (or a localized() option list) with its English text; the locale
// files hold each plugin's keys. This test extracts the keys from the sources and fails when a locale file misses
// one, holds one no source uses, or leaves one untranslated. UPDATE_LOCALES=1 rewrites the en-US files.

type Flat = Record<string, string>;

const SRC = path.join(__dirname);
const PLUGINS = [
  { id: 'inferscope-vllm-app', dir: SRC, owns: (f: string) => !f.startsWith(path.join(SRC, 'datasource')) },
  {
    id: 'inferscope-vllm-datasource',
    dir: path.join(SRC, 'datasource'),
    owns: (f: string) => f.startsWith(path.join(SRC, 'datasource')),
  },
];

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      return e.name === 'locales' || e.name === 'ct' ? [] : sources(p);
    }
    return /\.(ts|tsx)$/.test(e.name) && !/\.(test|ct)\.tsx?$/.test(e.name) ? [p] : [];
  });
}

const CALL = /\btf?\(\s*'([^']+)',\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")/g;

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** extract is every key the plugin's sources use, with its English text. */
function extract(owns: (f: string) => boolean): Flat {
  const out: Flat = {};
  for (const f of sources(SRC).filter(owns)) {
    for (const m of fs.readFileSync(f, 'utf8').matchAll(CALL)) {
      const text = unescape(m[2] ?? m[3]);
      if (out[m[1]] !== undefined && out[m[1]] !== text) {
        throw new Error(`${m[1]} has two English texts: "${out[m[1]]}" and "${text}"`);
      }
      out[m[1]] = text;
    }
  }
  return out;
}

/** listed is the keys of the option lists the editors translate with localized(). */
function listed(): Flat {
  const out: Flat = {};
  const add = (prefix: string, options: Array<{ value: string; label: string; description?: string }>) => {
    for (const o of options) {
      out[`${prefix}.${o.value || 'default'}.label`] = o.label;
      if (o.description !== undefined) {
        out[`${prefix}.${o.value || 'default'}.description`] = o.description;
      }
    }
  };
  add('catalog.type', QUERY_TYPES);
  for (const [type, m] of Object.entries(MEASURES)) {
    add(`catalog.measure.${type}`, m.options);
  }
  add('catalog.family', LATENCY_METRICS);
  add('group-by', GROUP_BY);
  add('variable-resource', VARIABLE_RESOURCES);
  add('raw-section.histogram', HISTOGRAM);
  add('config-editor.mode', MODES);
  return out;
}

function flatten(o: Record<string, unknown>, prefix = ''): Flat {
  return Object.entries(o).reduce<Flat>((acc, [k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    return typeof v === 'string' ? { ...acc, [key]: v } : { ...acc, ...flatten(v as Record<string, unknown>, key) };
  }, {});
}

function nest(flat: Flat): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(flat).sort()) {
    const parts = key.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) {
      node = (node[p] ??= {}) as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = flat[key];
  }
  return out;
}

function localeFile(dir: string, lang: string, id: string) {
  return path.join(dir, 'locales', lang, `${id}.json`);
}

function read(file: string): Flat {
  return fs.existsSync(file) ? flatten(JSON.parse(fs.readFileSync(file, 'utf8'))) : {};
}

// Proper nouns, and metric names, read the same in every language.
const SAME_EVERYWHERE = new Set(['Prometheus', 'PromQL']);
const sameEverywhere = (text: string) => SAME_EVERYWHERE.has(text) || /^[a-z0-9_:]+$/.test(text);

describe.each(PLUGINS)('locale files of $id', ({ id, dir, owns }) => {
  const english = { ...extract(owns), ...(id === 'inferscope-vllm-datasource' ? listed() : {}) };

  it('en-US holds exactly the keys the sources use, with their English text', () => {
    const file = localeFile(dir, 'en-US', id);
    if (process.env.UPDATE_LOCALES) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(nest(english), null, 2) + '\n');
    }
    expect(read(file)).toEqual(english);
  });

  it.each(LANGUAGES)('%s translates every key, and only those', (lang) => {
    const translated = read(localeFile(dir, lang, id));
    expect(Object.keys(translated).sort()).toEqual(Object.keys(english).sort());
    const untranslated = Object.keys(english).filter(
      (k) => !translated[k]?.trim() || (translated[k] === english[k] && !sameEverywhere(english[k]))
    );
    expect(untranslated).toEqual([]);
    // Placeholders survive translation.
    for (const k of Object.keys(english)) {
      const names = (s: string) => (s.match(/\{\{\s*\w+\s*\}\}/g) ?? []).map((p) => p.replace(/\s/g, '')).sort();
      expect([k, names(translated[k] ?? '')]).toEqual([k, names(english[k])]);
    }
  });
});
