// The README's CommonJS example, verbatim except for this line.
// example.cjs — node example.cjs
const { Keychain } = require('@signet/registry');

// The content of a kubernetes.io/dockerconfigjson pull secret: which credential each image gets.
const keychain = Keychain.fromDockerConfig({
  auths: {
    'registry.example': { username: 'ci', password: 'every-repository' },
    'registry.example/team': { username: 'team', password: 'one-repository' },
  },
});
for (const repository of ['team/app', 'other/app']) {
  const credential = keychain.credentialFor({ registry: 'registry.example', repository });
  console.log(repository, credential?.kind, credential?.username);
}
