package io.mailroom.email.dkim;

import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.Objects;

/**
 * One signing identity: mail whose From domain is {@code domain} (or a subdomain of it) is signed
 * with {@code d=domain; s=selector}, and receivers fetch the public key from the TXT record
 * {@code <selector>._domainkey.<domain>}. {@link #toString()} names the key's file, never the key.
 *
 * @param source where the key was read from (a file, or a keystore and alias), for messages
 */
public record DkimKey(String domain, String selector, DkimAlgorithm algorithm, PrivateKey privateKey, PublicKey publicKey,
                      String source) {

    public DkimKey {
        Objects.requireNonNull(domain, "domain");
        Objects.requireNonNull(selector, "selector");
        Objects.requireNonNull(algorithm, "algorithm");
        Objects.requireNonNull(privateKey, "privateKey");
        Objects.requireNonNull(publicKey, "publicKey");
        Objects.requireNonNull(source, "source");
    }

    /** The DNS name of the selector's key record. */
    public String recordName() {
        return selector + "._domainkey." + domain;
    }

    /**
     * The {@code p=} value to publish: base64 of the SubjectPublicKeyInfo for RSA (RFC 6376 §3.6.1),
     * of the bare 32-byte key for Ed25519 (RFC 8463 §4).
     */
    public String publishedKey() {
        return DkimPublicKeys.published(algorithm, publicKey);
    }

    /** The whole TXT record to publish at {@link #recordName()}. */
    public String txtRecord() {
        return "v=DKIM1; k=" + algorithm.keyType() + "; p=" + publishedKey();
    }

    @Override
    public String toString() {
        return domain + ":" + selector + ":" + algorithm.tag() + ":" + source;
    }
}
