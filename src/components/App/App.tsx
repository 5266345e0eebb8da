import React from 'react';
import { AppRootProps } from '@grafana/data';
import { useSceneApp } from '@grafana/scenes';
import { fleetApp } from '../../pages/scenes/app';

/** App renders the app's Scenes pages: the fleet, its drill-downs and the About tab. */
function App(_: AppRootProps) {
  const scene = useSceneApp(fleetApp);
  return <scene.Component model={scene} />;
}

export default App;
