import React from 'react';
import { Route, Routes } from 'react-router-dom';
import { AppRootProps } from '@grafana/data';
import { Overview } from '../../pages/Overview';

/** App routes the app's pages; every path lands on the overview until more pages exist. */
function App(_: AppRootProps) {
  return (
    <Routes>
      <Route path="*" element={<Overview />} />
    </Routes>
  );
}

export default App;
