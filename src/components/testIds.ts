/** data-testid values shared by Jest tests and Playwright specs. */
export const testIds = {
  overview: {
    container: 'data-testid inferscope-overview',
    backendStatus: 'data-testid inferscope-backend-status',
    dashboards: 'data-testid inferscope-dashboards',
  },
  appConfig: {
    container: 'data-testid inferscope-app-config',
    profilerNotice: 'data-testid inferscope-profiler-notice',
  },
  configEditor: {
    mode: 'data-testid inferscope-ds-mode',
    endpointUrl: (i: number) => `data-testid inferscope-ds-endpoint-url-${i}`,
    endpointName: (i: number) => `data-testid inferscope-ds-endpoint-name-${i}`,
    addEndpoint: 'data-testid inferscope-ds-add-endpoint',
    removeEndpoint: (i: number) => `data-testid inferscope-ds-remove-endpoint-${i}`,
    scrapeInterval: 'data-testid inferscope-ds-scrape-interval',
  },
  queryEditor: {
    queryType: 'data-testid inferscope-query-type',
  },
};
