/** Entry point: connect the PanelApi, wire its streams into the store, render. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { connectionChanged, startPanel } from './actions';
import { connectPanel } from './api';
import { App } from './App';
import './styles.css';

const connection = connectPanel((state, detail) => connectionChanged(state, detail));
startPanel(connection.api, connection.host);
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
