/**
 * The environment variable that starts the Electron app attached to a running hub's panel (its
 * value is the panel URL). Whoever spawns the app (the demo) passes the URL here rather than in
 * argv, so the URL's one-time sign-in code stays out of the command line other users' `ps` shows.
 */
export const ATTACH_ENV = 'UPLINK_ATTACH_URL';
