/**
 * Environments a gateway really starts in, as the platforms write them (names from their docs:
 * Kubernetes "Environment variables for Services" and the Downward API, Nomad's "Runtime
 * Environment", GitHub Actions' default variables and runner image, npm's `run-script`), with the
 * project's own deploy/ settings. For the start-up name check (server/config-names.ts): none of
 * these may stop the gateway. Each holds only what the platform and the image set; a test adds
 * the gateway's settings.
 */

/** The official Node image (deploy/Containerfile's base) and a shell's login variables. */
const IMAGE = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/home/node',
  HOSTNAME: 'volume-gateway-7d9f8b6c4-x2k9p',
  NODE_VERSION: '20.19.0',
  YARN_VERSION: '1.22.22',
  TERM: 'xterm',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
};

/** Kubernetes: one Service link set (`<SVC>_SERVICE_HOST`, `_SERVICE_PORT[_<name>]`, `_PORT`, `_PORT_<n>_TCP[_PROTO|_PORT|_ADDR]`) per Service of the namespace. */
function serviceLinks(svc: string, ip: string, ports: Array<[name: string, port: number]>): Record<string, string> {
  const [first] = ports;
  const env: Record<string, string> = {
    [`${svc}_SERVICE_HOST`]: ip,
    [`${svc}_SERVICE_PORT`]: String(first![1]),
    [`${svc}_PORT`]: `tcp://${ip}:${first![1]}`,
  };
  for (const [name, port] of ports) {
    if (name) env[`${svc}_SERVICE_PORT_${name}`] = String(port);
    const tcp = `${svc}_PORT_${port}_TCP`;
    Object.assign(env, {
      [tcp]: `tcp://${ip}:${port}`,
      [`${tcp}_PROTO`]: 'tcp',
      [`${tcp}_PORT`]: String(port),
      [`${tcp}_ADDR`]: ip,
    });
  }
  return env;
}

/** A pod of deploy/kubernetes in a namespace with Services `volume-gateway`, `gateway`, `redis` and `nomad`, plus the Downward API's usual fields. */
export const KUBERNETES_POD: Record<string, string> = {
  ...IMAGE,
  ...serviceLinks('KUBERNETES', '10.96.0.1', [['HTTPS', 443]]),
  ...serviceLinks('VOLUME_GATEWAY', '10.96.12.34', [
    ['HTTP', 4000],
    ['METRICS', 9464],
  ]),
  ...serviceLinks('GATEWAY', '10.96.40.2', [['', 4000]]),
  ...serviceLinks('REDIS', '10.96.7.7', [['', 6379]]),
  ...serviceLinks('NOMAD', '10.96.8.8', [['HTTP', 4646]]),
  POD_NAME: 'volume-gateway-7d9f8b6c4-x2k9p',
  POD_NAMESPACE: 'storage',
  POD_IP: '10.244.1.17',
  HOST_IP: '192.168.10.21',
  NODE_NAME: 'worker-3',
};

/** A task of deploy/nomad (docker driver, port label `http`) with workload identity and Vault. */
export const NOMAD_TASK: Record<string, string> = {
  ...IMAGE,
  HOSTNAME: '5b2c0e1f9a7d',
  NOMAD_ALLOC_DIR: '/alloc',
  NOMAD_TASK_DIR: '/local',
  NOMAD_SECRETS_DIR: '/secrets',
  NOMAD_MEMORY_LIMIT: '256',
  NOMAD_MEMORY_MAX_LIMIT: '512',
  NOMAD_CPU_LIMIT: '500',
  NOMAD_CPU_CORES: '0-1',
  NOMAD_ALLOC_ID: '5e2f3c1a-8b4d-4e6f-9a0b-1c2d3e4f5a6b',
  NOMAD_SHORT_ALLOC_ID: '5e2f3c1a',
  NOMAD_ALLOC_NAME: 'volume-gateway.gateway[0]',
  NOMAD_ALLOC_INDEX: '0',
  NOMAD_TASK_NAME: 'gateway',
  NOMAD_GROUP_NAME: 'gateway',
  NOMAD_JOB_NAME: 'volume-gateway',
  NOMAD_JOB_ID: 'volume-gateway',
  NOMAD_DC: 'dc1',
  NOMAD_NAMESPACE: 'default',
  NOMAD_REGION: 'global',
  NOMAD_IP_http: '10.0.0.5',
  NOMAD_PORT_http: '4000',
  NOMAD_ADDR_http: '10.0.0.5:4000',
  NOMAD_HOST_IP_http: '10.0.0.5',
  NOMAD_HOST_PORT_http: '23456',
  NOMAD_HOST_ADDR_http: '10.0.0.5:23456',
  NOMAD_ALLOC_PORT_http: '4000',
  NOMAD_UNIX_ADDR: 'unix:///secrets/api.sock',
  NOMAD_TOKEN: 'a1b2c3d4-workload-identity',
  VAULT_TOKEN: 'hvs.CAESIexample',
  VAULT_NAMESPACE: 'storage',
  CONSUL_HTTP_ADDR: '127.0.0.1:8500',
};

/** `npm test` on a GitHub Actions Ubuntu runner: the runner's variables, the image's tool paths, npm's `run-script` ones. */
export const CI_NPM: Record<string, string> = {
  ...IMAGE,
  HOSTNAME: 'fv-az1234-567',
  HOME: '/home/runner',
  USER: 'runner',
  SHELL: '/bin/bash',
  PWD: '/home/runner/work/volume-gateway/volume-gateway',
  SHLVL: '1',
  _: '/usr/local/bin/npm',
  CI: 'true',
  GITHUB_ACTIONS: 'true',
  GITHUB_SHA: '7895dfa0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6',
  GITHUB_REF: 'refs/heads/main',
  GITHUB_WORKSPACE: '/home/runner/work/volume-gateway/volume-gateway',
  GITHUB_ENV: '/home/runner/work/_temp/_runner_file_commands/set_env',
  GITHUB_OUTPUT: '/home/runner/work/_temp/_runner_file_commands/set_output',
  RUNNER_OS: 'Linux',
  RUNNER_TEMP: '/home/runner/work/_temp',
  RUNNER_TOOL_CACHE: '/opt/hostedtoolcache',
  ACTIONS_RUNNER_ACTION_ARCHIVE_CACHE: '/opt/actionarchivecache',
  ImageOS: 'ubuntu24',
  ImageVersion: '20250120.1.0',
  AGENT_TOOLSDIRECTORY: '/opt/hostedtoolcache',
  JAVA_HOME: '/usr/lib/jvm/temurin-17-jdk-amd64',
  JAVA_HOME_17_X64: '/usr/lib/jvm/temurin-17-jdk-amd64',
  ANDROID_HOME: '/usr/local/lib/android/sdk',
  ANDROID_SDK_ROOT: '/usr/local/lib/android/sdk',
  CHROME_BIN: '/usr/bin/google-chrome',
  CHROMEWEBDRIVER: '/usr/local/share/chromedriver-linux64',
  SELENIUM_JAR_PATH: '/usr/share/java/selenium-server.jar',
  PIPX_HOME: '/opt/pipx',
  PIPX_BIN_DIR: '/opt/pipx_bin',
  DOTNET_NOLOGO: '1',
  DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
  DEBIAN_FRONTEND: 'noninteractive',
  XDG_CONFIG_HOME: '/home/runner/.config',
  XDG_RUNTIME_DIR: '/run/user/1001',
  INVOCATION_ID: '0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f',
  JOURNAL_STREAM: '8:21045',
  SYSTEMD_EXEC_PID: '612',
  SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt',
  SSL_CERT_DIR: '/etc/ssl/certs',
  HTTP_PROXY: '',
  NO_PROXY: 'localhost,127.0.0.1',
  NODE_OPTIONS: '--max-old-space-size=4096',
  NODE: '/opt/hostedtoolcache/node/20.19.0/x64/bin/node',
  INIT_CWD: '/home/runner/work/volume-gateway/volume-gateway',
  COLOR: '0',
  EDITOR: 'vi',
  npm_command: 'run-script',
  npm_lifecycle_event: 'test',
  npm_lifecycle_script: 'jest',
  npm_package_name: 'volume-gateway',
  npm_package_version: '0.1.0',
  npm_package_json: '/home/runner/work/volume-gateway/volume-gateway/package.json',
  npm_node_execpath: '/opt/hostedtoolcache/node/20.19.0/x64/bin/node',
  npm_execpath: '/opt/hostedtoolcache/node/20.19.0/x64/lib/node_modules/npm/bin/npm-cli.js',
  npm_config_user_agent: 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false ci/github-actions',
  npm_config_cache: '/home/runner/.npm',
  npm_config_prefix: '/opt/hostedtoolcache/node/20.19.0/x64',
  npm_config_local_prefix: '/home/runner/work/volume-gateway/volume-gateway',
  npm_config_noproxy: '',
};
