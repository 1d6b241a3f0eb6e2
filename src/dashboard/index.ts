// The dashboard, its own entry point (`ferry/dashboard`): importing `ferry` loads no web server.
export { createDashboard, type Dashboard, type DashboardOptions } from './dashboard.js'
export {
  serveDashboard,
  isLoopback,
  DEFAULT_DASHBOARD_HOST,
  DEFAULT_DASHBOARD_PORT,
  TOKEN_MIN_LENGTH,
  type ServeDashboardOptions,
  type ServedDashboard,
} from './serve.js'
