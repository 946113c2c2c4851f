package io.mailroom.email.dkim;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.interfaces.EdECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Arrays;
import java.util.Base64;

/**
 * The public half of a private key, and the form DNS publishes it in.
 *
 * <p>A PKCS#8 file from {@code openssl genpkey} holds no public key. For RSA it follows from the
 * CRT form's modulus and public exponent. For Ed25519 the JDK has no "public key of this private
 * key" call, but its key pair generator derives the public key from 32 bytes it draws from the
 * {@link SecureRandom} it is given (RFC 8032 §5.1.5: the private key is those bytes): handed a
 * source that yields exactly the private key's bytes, it computes that key's public key.
 */
final class DkimPublicKeys {

    /** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the 32 key bytes follow. */
    private static final int ED25519_SPKI_PREFIX = 12;
    private static final int ED25519_KEY_BYTES = 32;

    private DkimPublicKeys() {
    }

    static PublicKey derive(PrivateKey key) throws GeneralSecurityException {
        if (key instanceof RSAPrivateCrtKey rsa) {
            return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(rsa.getModulus(), rsa.getPublicExponent()));
        }
        if (key instanceof EdECPrivateKey ed) {
            byte[] seed = ed.getBytes().orElseThrow(() -> new GeneralSecurityException("the Ed25519 key's bytes are not readable"));
            KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
            generator.initialize(NamedParameterSpec.ED25519, new FixedBytes(seed));
            return generator.generateKeyPair().getPublic();
        }
        throw new GeneralSecurityException("a " + key.getAlgorithm() + " key without its public part (RSA keys must be in CRT form, as openssl writes them)");
    }

    static String published(DkimAlgorithm algorithm, PublicKey key) {
        return Base64.getEncoder().encodeToString(publishedBytes(algorithm, key));
    }

    static byte[] publishedBytes(DkimAlgorithm algorithm, PublicKey key) {
        byte[] spki = key.getEncoded();
        if (algorithm == DkimAlgorithm.ED25519_SHA256) {
            return Arrays.copyOfRange(spki, ED25519_SPKI_PREFIX, ED25519_SPKI_PREFIX + ED25519_KEY_BYTES);
        }
        return spki;
    }

    /** Yields the given bytes once; anything else asked of it is a programming error. */
    private static final class FixedBytes extends SecureRandom {
        private static final long serialVersionUID = 1L;
        private final byte[] bytes;
        private boolean used;

        FixedBytes(byte[] bytes) {
            super(null, null);
            this.bytes = bytes.clone();
        }

        @Override
        public synchronized void nextBytes(byte[] out) {
            if (used || out.length != bytes.length) {
                throw new IllegalStateException("the Ed25519 generator asked for " + out.length + " bytes");
            }
            System.arraycopy(bytes, 0, out, 0, bytes.length);
            used = true;
        }
    }
}
