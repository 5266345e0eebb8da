import fs from 'fs';
import path from 'path';
import { GROUP_BY, LATENCY_METRICS, MEASURES, QUERY_TYPES, VARIABLE_RESOURCES } from './datasource/types';
import { MODES } from './datasource/components/ConfigEditor';
import { HISTOGRAM } from './datasource/components/query/RawSection';
import { LANGUAGES } from './i18n';

// Every user-visible string goes through t()/tf(), <Trans i18nKey> (or a localized() option list) with its English
// text; the locale files hold each plugin's keys. This test extracts the keys from the sources and fails when a
// locale file misses one, holds one no source uses, or leaves one untranslated (empty, or the English text itself
// outside the allow-list below). eslint's @grafana/i18n/no-untranslated-strings catches text not marked at all.
// UPDATE_LOCALES=1 rewrites the en-US files from the sources.

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
// <Trans i18nKey="key">English text</Trans>, the text without markup or {{values}} objects.
const TRANS = /<Trans\s+i18nKey=(?:"([^"]+)"|'([^']+)'|\{'([^']+)'\})[^>]*>([^<]*)<\/Trans>/g;
// Any call of t or tf, and any i18nKey: each must be one CALL or TRANS extracts, or the key would go unchecked.
const ANY_CALL = /\btf?\(/g;
const ANY_TRANS = /\bi18nKey=/g;
// The only sources that call t with a computed key: localized() (its keys come from listed()) and tf itself.
const COMPUTED_KEYS = [path.join(SRC, 'datasource', 'localized.ts'), path.join(SRC, 'i18n.ts')];

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** extract is every key the plugin's sources use, with its English text. */
function extract(owns: (f: string) => boolean): Flat {
  const out: Flat = {};
  const add = (key: string, text: string) => {
    if (out[key] !== undefined && out[key] !== text) {
      throw new Error(`${key} has two English texts: "${out[key]}" and "${text}"`);
    }
    out[key] = text;
  };
  for (const f of sources(SRC).filter(owns)) {
    const source = fs.readFileSync(f, 'utf8');
    for (const m of source.matchAll(CALL)) {
      add(m[1], unescape(m[2] ?? m[3]));
    }
    for (const m of source.matchAll(TRANS)) {
      add(m[1] ?? m[2] ?? m[3], m[4].replace(/\s+/g, ' ').trim());
    }
  }
  return out;
}

/** unextracted lists the t()/tf() calls and i18nKeys of the sources that extract() cannot read (computed keys). */
function unextracted(): string[] {
  return sources(SRC)
    .filter((f) => !COMPUTED_KEYS.includes(f))
    .flatMap((f) => {
      const source = fs.readFileSync(f, 'utf8');
      const count = (re: RegExp) => [...source.matchAll(re)].length;
      const calls = count(ANY_CALL) - count(CALL);
      const trans = count(ANY_TRANS) - count(TRANS);
      return [
        ...(calls ? [`${path.relative(SRC, f)}: ${calls} t() call(s) without a literal key and English text`] : []),
        ...(trans ? [`${path.relative(SRC, f)}: ${trans} <Trans> without a literal i18nKey and plain text`] : []),
      ];
    });
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

// The texts a translation may leave as they are: proper nouns, and a metric name standing alone (the latency
// families' descriptions, e.g. vllm:time_to_first_token_seconds), which operators grep for as written.
const SAME_EVERYWHERE = new Set(['Prometheus', 'PromQL', 'LMCache', 'P/D TTFT', 'MFU', 'DNS', 'Kubernetes', 'HTTP SD']);
const METRIC_NAME = /^vllm:[a-z0-9_]+$/;
const sameEverywhere = (text: string) => SAME_EVERYWHERE.has(text) || METRIC_NAME.test(text);

it('every t() call and <Trans> in the sources has a literal key and English text, so the checks below see it', () => {
  expect(unextracted()).toEqual([]);
});

describe.each(PLUGINS)('locale files of $id', ({ id, dir, owns }) => {
  const english = { ...extract(owns), ...(id === 'inferscope-vllm-datasource' ? listed() : {}) };

  it('plugin.json lists en-US and every language with a locale file, so Grafana offers them', () => {
    const pluginJson = JSON.parse(fs.readFileSync(path.join(dir, 'plugin.json'), 'utf8'));
    expect(pluginJson.id).toBe(id);
    expect([...pluginJson.languages].sort()).toEqual(['en-US', ...LANGUAGES].sort());
  });

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
