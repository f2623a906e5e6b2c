// EMS_* variables the installer and the release tools read, not the service (installer/*.sh, check-runtime.mjs): an
// admin or CI may have them in the service's environment, and they are no typo (unknownSettings in config.ts skips
// them). Kept out of config.ts, whose EMS_* names are the service's settings (the installer's env file documents each).
export const TOOL_SETTINGS: readonly string[] = ['EMS_CHECK_STATEMENTS', 'EMS_INSTALL_HEALTH_WAIT_SEC', 'EMS_RUNTIME_CACHE'];
