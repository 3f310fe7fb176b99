// The container images a kind node needs before it can pull anything (kubeadm's control plane,
// kube-proxy, CoreDNS, the Pod sandbox, the node network agent), made here from the binaries the
// testbed builds: a root filesystem per image, `docker import`ed under the name kubeadm (or the
// node's manifests) look up. Static Go binaries need nothing else; kube-proxy (nftables mode)
// needs `nft` and `conntrack`, kube-router's firewall `iptables` and `ipset`, taken from Debian's
// packages.
import { chmod, copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../exec.js';
import { buildDebianRootfs } from './debian-rootfs.js';
import type { Docker } from './docker.js';

export interface ComponentImage {
  readonly reference: string;
  /** Binary -> path inside the image. */
  readonly files: ReadonlyArray<{ readonly from: string; readonly to: string }>;
  /** Debian packages extracted under the binary (distroless-style: nothing installed, nothing run). */
  readonly debianPackages?: readonly string[];
  /**
   * Symbolic links to make (path inside the image -> target): what a package's maintainer scripts
   * would have set up, e.g. Debian's `update-alternatives` links, which extracting never runs.
   */
  readonly links?: ReadonlyArray<{ readonly path: string; readonly target: string }>;
  readonly changes?: readonly string[];
}

/** Packs `root` into a tarball with numeric owners and imports it as `reference`. */
export async function importDirectory(
  docker: Docker,
  root: string,
  reference: string,
  changes: readonly string[],
  workDir: string,
): Promise<void> {
  const tarball = join(workDir, `${reference.replace(/[^a-zA-Z0-9.-]+/g, '_')}.tar`);
  await runCommand('tar', ['--numeric-owner', '-C', root, '-cf', tarball, '.'], { timeoutMs: 600_000 });
  try {
    await docker.importTarball(tarball, reference, changes);
  } finally {
    await rm(tarball, { force: true });
  }
}

/** Builds one component image (skipped when the engine already has `reference`). */
export async function buildComponentImage(
  docker: Docker,
  image: ComponentImage,
  workDir: string,
): Promise<void> {
  const root = await mkdtemp(join(workDir, 'component-'));
  try {
    if (image.debianPackages && image.debianPackages.length > 0) {
      await buildDebianRootfs({ variant: 'extract', packages: image.debianPackages, output: root });
    }
    await mkdir(join(root, 'tmp'), { recursive: true });
    await chmod(join(root, 'tmp'), 0o1777);
    for (const file of image.files) {
      await mkdir(join(root, file.to, '..'), { recursive: true });
      await copyFile(file.from, join(root, file.to));
      await chmod(join(root, file.to), 0o755);
    }
    for (const link of image.links ?? []) {
      await mkdir(join(root, link.path, '..'), { recursive: true });
      await rm(join(root, link.path), { force: true });
      await symlink(link.target, join(root, link.path));
    }
    await importDirectory(docker, root, image.reference, image.changes ?? [], workDir);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
