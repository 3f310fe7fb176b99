export type {
  BundleArtifact,
  DigestRef,
  DiscoveredArtifact,
  DiscoveryRequest,
  FoundArtifact,
  LegacyAttestation,
  LegacySignature,
  RepositoryRef,
  UnreadableArtifact,
} from '@signet/registry';
