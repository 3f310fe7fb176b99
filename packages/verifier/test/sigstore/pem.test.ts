import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase64, pemBlocks, publicKeyFromBlock, toPem } from '../../src/sigstore/pem.js';

describe('PEM and base64', () => {
  it('decode strict base64 only', () => {
    expect(decodeBase64(' aGk=\n').toString()).toBe('hi');
    expect(() => decodeBase64('aGk')).toThrow('not valid base64');
    expect(() => decodeBase64('a$k=')).toThrow('not valid base64');
  });

  it('read every block, with or without headers, and refuse broken ones', () => {
    const der = Buffer.from('hello');
    const text = `junk\n${toPem(der, 'CERTIFICATE')}${toPem(der, 'PUBLIC KEY').replace('\n', '\nProc-Type: 4,ENCRYPTED\n')}`;
    expect(pemBlocks(text).map((b) => [b.label, b.der.toString()])).toEqual([
      ['CERTIFICATE', 'hello'],
      ['PUBLIC KEY', 'hello'],
    ]);
    expect(() => pemBlocks('no pem')).toThrow('no PEM block found');
    expect(toPem(Buffer.alloc(0), 'X')).toBe('-----BEGIN X-----\n\n-----END X-----\n');
    expect(() => pemBlocks('-----BEGIN A-----\naGk=\n-----END B-----')).toThrow(
      'PEM block "A" ends with "B"',
    );
    expect(() => pemBlocks('-----BEGIN A-----\n-----END A-----')).toThrow('PEM block "A" is empty');
  });

  it('read SPKI and PKCS#1 public keys with the same fingerprint', () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const spki = publicKeyFromBlock(
      pemBlocks(publicKey.export({ format: 'pem', type: 'spki' }).toString())[0] as never,
    );
    const pkcs1 = publicKeyFromBlock(
      pemBlocks(publicKey.export({ format: 'pem', type: 'pkcs1' }).toString())[0] as never,
    );
    expect(pkcs1.fingerprint).toBe(spki.fingerprint);
    expect(() => publicKeyFromBlock({ label: 'CERTIFICATE', der: Buffer.from('x') })).toThrow(
      'expected a PUBLIC KEY block, got "CERTIFICATE"',
    );
  });
});
