// Jest setup provided by Grafana scaffolding
import './.config/jest-setup';
