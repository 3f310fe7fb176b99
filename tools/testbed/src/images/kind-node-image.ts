// A kind node image for the pinned Kubernetes, built offline and laid out as kind's own
// (sigs.k8s.io/kind: images/base/Dockerfile for the base, pkg/build/nodeimage for the node):
//   base: a Debian root filesystem (systemd, iptables/nftables, iproute2, runc, CNI plugins, ...)
//         made with mmdebstrap, kind's base files (entrypoint, systemd units, containerd config)
//         read from the kind module in the Go module cache, containerd built from its module;
//   node: kubelet, kubeadm, kubectl in /usr/bin, /kind/version, the CNI manifest, and every image
//         kubeadm needs imported into the node's containerd (namespace k8s.io, pinned).
// The result is cached as a `docker save` tarball under <cache>/images/, named by a digest of
// everything that went into it, so a warm machine only `docker load`s it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  appendFile,
  chmod,
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { join, relative } from 'node:path';
import { runCommand } from '../exec.js';
import { cacheRoot, ensureTools, GO_MODULES_DIR, toolSpec } from '../tools.js';
import { buildComponentImage, type ComponentImage, importDirectory } from './component-images.js';
import { buildDebianRootfs, hostSuite } from './debian-rootfs.js';
import type { Docker } from './docker.js';
import { KINDNET_MANIFEST } from './kindnet-manifest.js';

/** Bump when the recipe below changes in a way the inputs' digest does not see. */
const RECIPE = 6;

/** What kind's base image installs from apt (less NFS, iSCSI and fuse-overlayfs), plus Debian's runc and CNI plugins. */
export const NODE_PACKAGES = [
  'systemd',
  'conntrack',
  'iptables',
  'nftables',
  'iproute2',
  'ethtool',
  'util-linux',
  'mount',
  'kmod',
  'libseccomp2',
  'pigz',
  'e2fsprogs',
  'bash',
  'ca-certificates',
  'jq',
  'procps',
  // runc is C and Go (cgo, libseccomp): Debian's build, not a static Go one.
  'runc',
  // host-local, loopback, ptp and portmap, what kind's node uses.
  'containernetworking-plugins',
] as const;

/** Names the node's containerd and kubeadm look up; tags say which build is inside. */
export const KIND_IMAGE_NAMES = {
  pause: 'registry.k8s.io/pause:3.10.2',
  etcd: `registry.k8s.io/etcd:${toolSpec('etcd').version.replace(/^v/, '')}-0`,
  coredns: `registry.k8s.io/coredns/coredns:${toolSpec('coredns').version}`,
} as const;

export interface KindNodeImage {
  readonly reference: string;
  readonly kubernetesVersion: string;
  /** `docker save` tarball in the cache. */
  readonly tarball: string;
  /** How it was obtained this time, and how long that took. */
  readonly source: 'engine' | 'cache' | 'built';
  readonly seconds: number;
  /** etcd's image tag, for kubeadm's `etcd.local.imageTag` (kubeadm 1.36 defaults to an older etcd). */
  readonly etcdImageTag: string;
}

export interface KindNodeImageOptions {
  readonly docker: Docker;
  readonly onProgress?: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

const NODE_TOOLS = [
  'kubelet',
  'kubeadm',
  'kubectl',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kube-proxy',
  'etcd',
  'coredns',
  'pause',
  'kindnetd',
  'kube-router',
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
] as const;

type NodeTools = Record<(typeof NODE_TOOLS)[number], string>;

/** The kind module's directory in the Go module cache (downloaded with the testbed's go.sum). */
export async function kindModuleDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const spec = toolSpec('kind');
  const { stdout } = await runCommand('go', ['mod', 'download', '-json', `${spec.module}@${spec.version}`], {
    cwd: join(GO_MODULES_DIR, spec.moduleDir),
    env,
    timeoutMs: 300_000,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download did not say where ${spec.module}@${spec.version} is`);
  return dir;
}

async function digestTree(hash: ReturnType<typeof createHash>, dir: string): Promise<void> {
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name);
    hash.update(`${entry.name}\0`);
    if (entry.isDirectory()) await digestTree(hash, path);
    else hash.update(await readFile(path));
  }
}

/** Makes sure the engine has the node image: present, else loaded from the cache, else built (minutes). */
export async function ensureKindNodeImage(options: KindNodeImageOptions): Promise<KindNodeImage> {
  const report = options.onProgress ?? (() => {});
  const env = options.env ?? process.env;
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 100) / 10;
  const tools = (await ensureTools(NODE_TOOLS, {
    env,
    onProgress: (event) => report(`kind node image: ${event.message}`),
  })) as NodeTools;
  const kindFiles = join(await kindModuleDir(env), 'images', 'base', 'files');
  const kubernetesVersion = toolSpec('kubelet').version;
  // The tools by cache path relative to the cache (name, version, source digest), not by where the
  // cache is: the same inputs give the same image on every machine.
  const root = cacheRoot(env);
  const toolKeys = Object.fromEntries(
    Object.entries(tools).map(([name, path]) => [name, relative(root, path)]),
  );
  const hash = createHash('sha256').update(
    JSON.stringify({
      RECIPE,
      toolKeys,
      NODE_PACKAGES,
      suite: hostSuite(),
      KIND_IMAGE_NAMES,
      KINDNET_MANIFEST,
    }),
  );
  await digestTree(hash, kindFiles);
  const key = hash.digest('hex').slice(0, 12);
  const reference = `signet-kind-node:${kubernetesVersion}-${key}`;
  const imagesDir = join(cacheRoot(env), 'images');
  const tarball = join(imagesDir, `kind-node-${kubernetesVersion}-${key}.tar`);
  const etcdImageTag = KIND_IMAGE_NAMES.etcd.split(':')[1] ?? '';
  const result = (source: KindNodeImage['source']): KindNodeImage => ({
    reference,
    kubernetesVersion,
    tarball,
    source,
    seconds: seconds(),
    etcdImageTag,
  });
  const docker = options.docker;
  if (await docker.imageExists(reference)) {
    report(`kind node image: ${reference} is in the engine`);
    return result('engine');
  }
  if (existsSync(tarball)) {
    report(`kind node image: docker load ${tarball}`);
    await docker.load(tarball);
    report(`kind node image: loaded ${reference} in ${seconds()}s`);
    return result('cache');
  }
  report(
    `kind node image: building ${reference} (Debian packages, component images, containerd import; minutes)`,
  );
  await mkdir(imagesDir, { recursive: true });
  const workDir = await mkdtemp(join(imagesDir, '.build-'));
  try {
    const step = async (what: string, work: () => Promise<void>) => {
      const stepStarted = Date.now();
      report(`kind node image: ${what} ...`);
      const heartbeat = setInterval(
        () => report(`kind node image: still ${what} (${Math.round((Date.now() - stepStarted) / 1000)}s)`),
        15_000,
      );
      try {
        await work();
      } finally {
        clearInterval(heartbeat);
      }
      report(`kind node image: ${what} done in ${Math.round((Date.now() - stepStarted) / 1000)}s`);
    };
    const components = componentImages(tools, kubernetesVersion, key);
    await step(`component images (${components.map((c) => c.reference).join(', ')})`, async () => {
      for (const image of components) await buildComponentImage(docker, image, workDir);
      await docker.save(
        components.map((c) => c.reference),
        join(workDir, 'images.tar'),
      );
    });
    const baseReference = `signet-kind-base:${key}`;
    await step(`base root filesystem (mmdebstrap ${NODE_PACKAGES.length} packages)`, async () => {
      const root = join(workDir, 'rootfs');
      await buildDebianRootfs({ variant: 'minbase', packages: NODE_PACKAGES, output: root });
      await layOutBase(root, kindFiles, tools);
      await layOutNode(root, tools, kubernetesVersion, components);
      await importDirectory(
        docker,
        root,
        baseReference,
        ['ENV container=docker', 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]'],
        workDir,
      );
      await rm(root, { recursive: true, force: true });
    });
    await step('importing the component images into the node containerd', () =>
      importIntoContainerd(docker, baseReference, reference, join(workDir, 'images.tar')),
    );
    await step(`docker save ${reference}`, async () => {
      const partial = `${tarball}.${process.pid}.tmp`;
      await docker.save([reference], partial);
      await rename(partial, tarball);
      await removeOtherNodeImages(imagesDir, tarball);
    });
    await docker.run(['rmi', baseReference, ...components.map((c) => c.reference)]).catch(() => undefined);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  const size = Math.round((await stat(tarball)).size / 1024 / 1024);
  report(`kind node image: built ${reference} in ${seconds()}s (${size} MiB, cached at ${tarball})`);
  return result('built');
}

/** Every image kubeadm (and the node's manifests) need, from the testbed's binaries. */
function componentImages(tools: NodeTools, version: string, key: string): ComponentImage[] {
  const kube = (name: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler'): ComponentImage => ({
    reference: `registry.k8s.io/${name}:${version}`,
    files: [{ from: tools[name], to: `usr/local/bin/${name}` }],
  });
  return [
    kube('kube-apiserver'),
    kube('kube-controller-manager'),
    kube('kube-scheduler'),
    {
      reference: `registry.k8s.io/kube-proxy:${version}`,
      files: [{ from: tools['kube-proxy'], to: 'usr/local/bin/kube-proxy' }],
      // nftables mode: kube-proxy runs `nft`; conntrack clears stale UDP entries.
      debianPackages: ['nftables', 'conntrack'],
    },
    { reference: KIND_IMAGE_NAMES.etcd, files: [{ from: tools.etcd, to: 'usr/local/bin/etcd' }] },
    {
      reference: KIND_IMAGE_NAMES.coredns,
      files: [{ from: tools.coredns, to: 'coredns' }],
      changes: ['ENTRYPOINT ["/coredns"]'],
    },
    {
      reference: KIND_IMAGE_NAMES.pause,
      files: [{ from: tools.pause, to: 'pause' }],
      changes: ['ENTRYPOINT ["/pause"]', 'USER 65535:65535'],
    },
    {
      reference: kindnetImage(key),
      files: [{ from: tools.kindnetd, to: 'kindnetd' }],
      changes: ['ENTRYPOINT ["/kindnetd"]'],
    },
    {
      // kube-router's firewall runs `iptables-save`/`iptables-restore` and `ipset` by name: the
      // nftables flavour, as the node's own iptables (Debian's default alternative).
      reference: kubeRouterImage(key),
      files: [{ from: tools['kube-router'], to: 'usr/local/bin/kube-router' }],
      debianPackages: ['iptables', 'ipset'],
      links: [
        'iptables',
        'iptables-save',
        'iptables-restore',
        'ip6tables',
        'ip6tables-save',
        'ip6tables-restore',
      ].map((name) => ({ path: `usr/sbin/${name}`, target: name.replace(/^(ip6?tables)/, '$1-nft') })),
      changes: [
        'ENTRYPOINT ["/usr/local/bin/kube-router"]',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      ],
    },
  ];
}

const kindnetImage = (key: string) => `localhost/signet/kindnetd:${key}`;
const kubeRouterImage = (key: string) => `localhost/signet/kube-router:${key}`;

async function copyExecutable(from: string, to: string): Promise<void> {
  await mkdir(join(to, '..'), { recursive: true });
  await copyFile(from, to);
  await chmod(to, 0o755);
}

/** kind's images/base/Dockerfile, step by step, on a root filesystem directory. */
async function layOutBase(root: string, kindFiles: string, tools: NodeTools): Promise<void> {
  // Static files; the module cache is read-only, so modes are set after copying.
  const copyTree = async (from: string, to: string, mode: number) => {
    await mkdir(to, { recursive: true });
    await cp(from, to, { recursive: true, force: true });
    await runCommand('chmod', ['-R', 'u+w', to], { timeoutMs: 30_000 });
    await runCommand('find', [to, '-type', 'f', '-exec', 'chmod', mode.toString(8), '{}', '+'], {
      timeoutMs: 30_000,
    });
  };
  await copyTree(join(kindFiles, 'usr/local/bin'), join(root, 'usr/local/bin'), 0o755);
  await copyTree(join(kindFiles, 'kind'), join(root, 'kind'), 0o644);
  await runCommand('chmod', ['-R', '0755', join(root, 'kind/bin')], { timeoutMs: 30_000 });
  await runCommand('chmod', ['0755', join(root, 'kind')], { timeoutMs: 30_000 });
  await copyTree(join(kindFiles, 'etc'), join(root, 'etc'), 0o644);
  // The sandbox image is ours (see KIND_IMAGE_NAMES). restrict_oom_score_adj: lowering a
  // process's oom_score_adj needs CAP_SYS_RESOURCE, which a node started through
  // oci-runtime-wrapper lacks; unrestricted, runc's child fails to write the sandbox's -998 and
  // every Pod sandbox dies ("can't get final child's PID from pipe"). Restricted, containerd
  // clamps the value to its own, as kind's entrypoint does for rootless nodes.
  const containerdConfig = join(root, 'etc/containerd/config.toml');
  const config = await readFile(containerdConfig, 'utf8');
  const patched = config
    .replace(/sandbox_image = ".*"/, `sandbox_image = "${KIND_IMAGE_NAMES.pause}"`)
    .replace('restrict_oom_score_adj = false', 'restrict_oom_score_adj = true');
  if (!patched.includes('restrict_oom_score_adj = true') || !patched.includes(KIND_IMAGE_NAMES.pause)) {
    throw new Error(`kind's containerd config changed shape: ${containerdConfig}`);
  }
  await writeFile(containerdConfig, patched);
  // systemd in a container: no getty, udev or kmsg; only the units kind enables.
  const unitDirs = [
    'lib/systemd/system/multi-user.target.wants',
    'lib/systemd/system/local-fs.target.wants',
    'lib/systemd/system/basic.target.wants',
  ];
  for (const dir of unitDirs) await rm(join(root, dir), { recursive: true, force: true });
  await rm(join(root, 'lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service'), {
    force: true,
  });
  for (const dir of await readdir(join(root, 'etc/systemd/system'))) {
    if (dir.endsWith('.wants'))
      await rm(join(root, 'etc/systemd/system', dir), { recursive: true, force: true });
  }
  const sockets = join(root, 'lib/systemd/system/sockets.target.wants');
  if (existsSync(sockets)) {
    for (const unit of await readdir(sockets)) {
      if (unit.includes('udev') || unit.includes('initctl')) await rm(join(sockets, unit), { force: true });
    }
  }
  await appendFile(join(root, 'etc/systemd/journald.conf'), 'ReadKMsg=no\n');
  await rm(join(root, 'sbin/init'), { force: true });
  await runCommand('ln', ['-s', '/usr/lib/systemd/systemd', join(root, 'sbin/init')], { timeoutMs: 10_000 });
  await runCommand(
    'chroot',
    [root, 'systemctl', 'enable', 'kubelet.service', 'containerd.service', 'undo-mount-hacks.service'],
    {
      timeoutMs: 60_000,
    },
  );
  await runCommand('chroot', [root, 'systemctl', 'mask', 'systemd-binfmt.service'], { timeoutMs: 60_000 });
  await mkdir(join(root, 'etc/kubernetes/manifests'), { recursive: true });
  // containerd from its Go module (kind builds the same release from source).
  for (const name of ['containerd', 'ctr', 'containerd-shim-runc-v2'] as const) {
    await copyExecutable(tools[name], join(root, 'usr/local/bin', name));
  }
  // The base OCI spec, as kind makes it: ctr's default, a createContainer hook, no rlimits.
  const { stdout } = await runCommand(tools.ctr, ['oci', 'spec'], { timeoutMs: 30_000 });
  const spec = JSON.parse(stdout) as {
    hooks?: { createContainer?: object[] };
    process?: { rlimits?: unknown };
  };
  spec.hooks ??= {};
  spec.hooks.createContainer = [
    ...(spec.hooks.createContainer ?? []),
    { path: '/kind/bin/mount-product-files.sh' },
  ];
  if (spec.process) delete spec.process.rlimits;
  await writeFile(join(root, 'etc/containerd/cri-base.json'), `${JSON.stringify(spec, null, 2)}\n`);
  // Debian installs the CNI plugins under /usr/lib/cni; kubelet and containerd look in /opt/cni/bin.
  for (const plugin of ['host-local', 'loopback', 'ptp', 'portmap']) {
    await copyExecutable(join(root, 'usr/lib/cni', plugin), join(root, 'opt/cni/bin', plugin));
  }
}

/** kind's pkg/build/nodeimage: binaries, version, manifests (the images are imported afterwards). */
async function layOutNode(
  root: string,
  tools: NodeTools,
  version: string,
  components: ComponentImage[],
): Promise<void> {
  for (const name of ['kubeadm', 'kubelet', 'kubectl'] as const) {
    await copyExecutable(tools[name], join(root, 'usr/bin', name));
  }
  await writeFile(join(root, 'kind/version'), version);
  await mkdir(join(root, 'kind/manifests'), { recursive: true });
  const image = (name: string) => components.find((c) => c.reference.includes(`/${name}:`))?.reference ?? '';
  await writeFile(
    join(root, 'kind/manifests/default-cni.yaml'),
    KINDNET_MANIFEST.replace('KINDNETD_IMAGE', image('kindnetd')).replace(
      'KUBE_ROUTER_IMAGE',
      image('kube-router'),
    ),
  );
}

/**
 * As kind's image importer: containerd started inside a container of the base image, the images
 * imported pinned without unpacking, the container committed as the node image.
 */
async function importIntoContainerd(
  docker: Docker,
  baseReference: string,
  reference: string,
  imagesTar: string,
): Promise<void> {
  const name = `signet-kind-build-${process.pid}`;
  await docker.run([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'none',
    '--entrypoint',
    'sleep',
    '--security-opt',
    'seccomp=unconfined',
    baseReference,
    'infinity',
  ]);
  try {
    await docker.run(['exec', name, 'bash', '-c', 'nohup containerd > /var/log/containerd-build.log 2>&1 &']);
    await docker.run([
      'exec',
      name,
      'bash',
      '-c',
      'for i in $(seq 1 60); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 0.5; done; cat /var/log/containerd-build.log; exit 1',
    ]);
    await docker.runWithFileInput(
      [
        'exec',
        '--interactive',
        name,
        'ctr',
        '--namespace=k8s.io',
        'images',
        'import',
        '--label=io.cri-containerd.pinned=pinned',
        '--all-platforms',
        '--no-unpack',
        '--digests',
        '-',
      ],
      imagesTar,
    );
    // `sleep` is PID 1 and reaps nothing: containerd is done once it is a zombie (state Z).
    await docker.run([
      'exec',
      name,
      'bash',
      '-c',
      'pkill containerd; while ps -o stat= -C containerd | grep -qv Z; do sleep 0.2; done; rm -f /var/log/containerd-build.log',
    ]);
    const committed = `${reference}-commit`;
    await docker.run([
      'commit',
      '--change',
      'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]',
      '--change',
      'ENV HTTP_PROXY="" HTTPS_PROXY="" NO_PROXY=""',
      name,
      committed,
    ]);
    // systemd stops on SIGRTMIN+3, not SIGTERM; neither `import` nor `commit` can set STOPSIGNAL,
    // a one-line build on the local image can (the legacy builder never pulls an image it has).
    await docker.run(['build', '--network', 'none', '--tag', reference, '-'], {
      input: `FROM ${committed}\nSTOPSIGNAL SIGRTMIN+3\n`,
      timeoutMs: 300_000,
    });
    await docker.run(['rmi', committed]);
  } finally {
    await docker.run(['rm', '--force', '--volumes', name]).catch(() => undefined);
  }
}

/** One node image in the cache at a time: an older build's tarball is deleted once a new one is saved. */
async function removeOtherNodeImages(imagesDir: string, keep: string): Promise<void> {
  for (const file of await readdir(imagesDir)) {
    const path = join(imagesDir, file);
    if (file.startsWith('kind-node-') && file.endsWith('.tar') && path !== keep)
      await rm(path, { force: true });
  }
}
