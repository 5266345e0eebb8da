import { CustomVariableSupport, DataQueryRequest, DataQueryResponse } from '@grafana/data';
import { from, map, Observable } from 'rxjs';
import type { DataSource } from './datasource';
import { VariableQueryEditor } from './components/VariableQueryEditor';
import { VariableQuery, VllmQuery } from './types';

/**
 * VllmVariableSupport lets template variables list models, endpoints, engines / DP ranks, metric names or one
 * label's values, with the editor in VariableQueryEditor; stored queries keep the {queryType, resource} shape.
 */
export class VllmVariableSupport extends CustomVariableSupport<DataSource, VariableQuery, VllmQuery> {
  editor = VariableQueryEditor;

  constructor(private readonly datasource: DataSource) {
    super();
  }

  query(request: DataQueryRequest<VariableQuery>): Observable<DataQueryResponse> {
    const target = request.targets[0];
    return from(this.datasource.metricFindQuery(target, { scopedVars: request.scopedVars })).pipe(
      map((data) => ({ data }))
    );
  }
}
