import { parseDuration, validateQuery, validateSettings } from './validation';

describe('parseDuration', () => {
  it('reads Go durations', () => {
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('5')).toBeUndefined();
    expect(parseDuration('1d')).toBeUndefined();
  });
});

describe('validateSettings', () => {
  it('flags the mistakes the backend rejects', () => {
    const errors = validateSettings({
      mode: 'direct',
      endpoints: [{ url: 'ftp://x/metrics' }, { url: 'http://a:8000/metrics' }, { url: 'http://a:8000/metrics' }],
      scrapeInterval: '500ms',
      scrapeTimeout: '2s',
    });
    expect(errors.endpoints[0]).toMatch(/not an http\(s\) URL/);
    expect(errors.endpoints[1]).toBeUndefined();
    expect(errors.endpoints[2]).toMatch(/listed twice/);
    expect(errors.scrapeInterval).toMatch(/at least 1s/);
    expect(errors.scrapeTimeout).toMatch(/longer than the scrape interval/);
  });

  it('refuses endpoints the backend would mix up', () => {
    const errs = (endpoints: Array<{ url: string; name?: string }>) =>
      validateSettings({ mode: 'direct', endpoints }).endpoints;
    expect(
      errs([
        { url: 'http://a:8000/metrics', name: 'gpu' },
        { url: 'http://b:8000/metrics', name: 'gpu' },
      ])[1]
    ).toMatch(/has the name "gpu" of endpoint 1/);
    expect(
      errs([
        { url: 'http://A:80/metrics/', name: 'x' },
        { url: 'http://a/metrics', name: 'y' },
      ])[1]
    ).toMatch(/endpoint 1's target too/);
    expect(errs([{ url: 'http://a:8000/metrics', name: 'b:9000' }, { url: 'http://b:9000/metrics' }])[1]).toMatch(
      /has the name "b:9000" of endpoint 1/
    );
    expect(
      errs([
        { url: 'http://a:8000/metrics', name: 'b:9000' },
        { url: 'http://b:9000/metrics', name: 'bee' },
      ])[0]
    ).toMatch(/is endpoint 2's host:port/);
    expect(
      errs([
        { url: 'http://a:8000/metrics', name: 'x' },
        { url: 'http://a:8000/other', name: 'y' },
      ])
    ).toEqual({});
  });

  it('keeps numbers in the backend ranges', () => {
    const base = { mode: 'direct' as const, endpoints: [{ url: 'http://a/metrics' }] };
    expect(validateSettings({ ...base, maxMemoryMB: 8796093022208 }).maxMemoryMB).toMatch(/between 16 and 65536/);
    expect(validateSettings({ ...base, maxBodyMB: 8796093022208 }).limits).toMatch(/at most 1024 MB/);
    expect(validateSettings({ ...base, scrapeInterval: '48h' }).scrapeInterval).toMatch(/at most 1h/);
    expect(validateSettings({ ...base, retention: '10000h' }).retention).toMatch(/at most 744h/);
  });

  it('needs an endpoint in direct mode only', () => {
    expect(validateSettings({ mode: 'direct', endpoints: [] }).endpointsMissing).toBeDefined();
    expect(validateSettings({ mode: 'prometheus' }).endpointsMissing).toBeUndefined();
  });

  it('accepts a good configuration', () => {
    expect(
      validateSettings({
        endpoints: [{ url: 'https://a/metrics' }],
        scrapeInterval: '5s',
        scrapeTimeout: '4s',
        retention: '1h',
      })
    ).toEqual({
      endpoints: {},
    });
  });
});

describe('validateQuery', () => {
  it('checks regexes, windows, quantiles, headroom and required fields', () => {
    expect(validateQuery({ refId: 'A', queryType: 'latency', model: '(', window: '1d', quantiles: [0.5, 2] })).toEqual({
      model: 'Not a valid regular expression.',
      window: expect.stringMatching(/positive duration/),
      quantiles: expect.stringMatching(/between 0 and 1/),
    });
    expect(validateQuery({ refId: 'A', queryType: 'capacity', headroom: 0.95 }).headroom).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'raw' }).metric).toBeDefined();
    expect(validateQuery({ refId: 'A', queryType: 'promql', expr: ' ' }).expr).toBeDefined();
  });

  it('leaves template variables to Grafana', () => {
    expect(validateQuery({ refId: 'A', queryType: 'latency', model: '$model', window: '$__rate_interval' })).toEqual(
      {}
    );
  });
});
