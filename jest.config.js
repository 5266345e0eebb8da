// force timezone to UTC to allow tests to work regardless of local timezone
// generally used by snapshots, but can affect specific tests
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');
const { grafanaESModules, nodeModulesToTransform } = require('./.config/jest/utils');

// The scaffold's transform misses .mjs files, which @grafana/data 13 reaches through d3-interpolate/d3-color,
// so widen the transform pattern to .mjs and keep those ESM-only packages out of the ignore list.
const [swcPattern, swcTransform] = Object.entries(base.transform)[0];

module.exports = {
  ...base,
  transform: { '^.+\\.(t|j)sx?$|^.+\\.mjs$': swcTransform },
  transformIgnorePatterns: [nodeModulesToTransform([...grafanaESModules, 'react-data-grid', '@grafana/react-data-grid', '@react-hookz', '@ver0', '@marcbachmann/cel-js'])],
  setupFilesAfterEnv: [...base.setupFilesAfterEnv, '<rootDir>/jest-polyfills.js'],
};
void swcPattern;
