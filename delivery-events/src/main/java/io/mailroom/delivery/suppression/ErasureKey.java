package io.mailroom.delivery.suppression;

import org.jooq.DSLContext;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

import static io.mailroom.db.jooq.Tables.ERASURE_KEY;

/**
 * The key of the hash an erased address is kept under while its suppression stays in force
 * (HMAC-SHA256 of the normalized address, {@code suppression.address_hash}): the same in every
 * process of one database, or the dispatcher's check would miss what support erased.
 *
 * <p>Configured ({@code MAILROOM_ERASURE_KEY}, read by the service and given to every part that
 * hashes: dispatcher, webhooks, support server and commands), the key is kept out of the database:
 * someone who can read the database but not the service's settings cannot test guessed addresses
 * against the hashes. Not configured, the key is the random one V20 stored in {@code erasure_key}
 * (owned by delivery-events): nothing to set up, but whoever reads the database can test a guess.
 * Either way the key must not change once an address is erased, or its suppression stops matching.
 */
public final class ErasureKey {

    /** The shortest key accepted: 32 characters (e.g. {@code openssl rand -hex 32} gives 64). */
    public static final int MIN_LENGTH = 32;
    private static final String MAC = "HmacSHA256";

    private final byte[] configured;
    private volatile byte[] stored;
    /** A MAC initialised with the key, cloned for each hash: the provider look-up and the key set-up once. */
    private volatile Mac prototype;

    private ErasureKey(byte[] configured) {
        this.configured = configured;
    }

    /** The key stored in the database ({@code erasure_key}). */
    public static ErasureKey stored() {
        return new ErasureKey(null);
    }

    /**
     * A key given by configuration.
     *
     * @param setting what the key is called where it is set, for the error
     * @throws IllegalArgumentException naming {@code setting} when the key is shorter than {@value #MIN_LENGTH} characters
     */
    public static ErasureKey configured(String setting, String secret) {
        if (secret == null || secret.length() < MIN_LENGTH) {
            throw new IllegalArgumentException(setting + " must be at least " + MIN_LENGTH
                    + " characters (e.g. the output of: openssl rand -hex 32)");
        }
        return new ErasureKey(secret.getBytes(StandardCharsets.UTF_8));
    }

    public boolean isConfigured() {
        return configured != null;
    }

    /** The hash of a normalized address under this key: 64 lower-case hex digits. */
    public String hash(DSLContext tx, String normalizedAddress) {
        return HexFormat.of().formatHex(mac(tx).doFinal(normalizedAddress.getBytes(StandardCharsets.UTF_8)));
    }

    private Mac mac(DSLContext tx) {
        Mac p = prototype;
        try {
            if (p == null) {
                p = Mac.getInstance(MAC);
                p.init(new SecretKeySpec(key(tx), MAC));
                prototype = p;
            }
            return (Mac) p.clone();
        } catch (CloneNotSupportedException e) {
            try {
                Mac fresh = Mac.getInstance(MAC);
                fresh.init(new SecretKeySpec(key(tx), MAC));
                return fresh;
            } catch (GeneralSecurityException g) {
                throw new IllegalStateException("HmacSHA256 is not available", g);
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    /**
     * A short name of the key (the first 12 hex digits of its hash of a fixed text), written in the
     * erasure's audit entry so that a key changed later can be told from the one used.
     */
    public String id(DSLContext tx) {
        return hash(tx, "mailroom erasure key id").substring(0, 12);
    }

    private byte[] key(DSLContext tx) {
        if (configured != null) {
            return configured;
        }
        byte[] k = stored;
        if (k == null) {
            k = tx.select(ERASURE_KEY.SECRET).from(ERASURE_KEY).where(ERASURE_KEY.ID.eq((short) 1)).fetchOne(ERASURE_KEY.SECRET);
            if (k == null) {
                // V20 stores one; only a hand-deleted row gets here, and the first writer's key wins
                byte[] fresh = new byte[32];
                new SecureRandom().nextBytes(fresh);
                tx.insertInto(ERASURE_KEY, ERASURE_KEY.ID, ERASURE_KEY.SECRET).values((short) 1, fresh)
                        .onConflictDoNothing().execute();
                k = tx.select(ERASURE_KEY.SECRET).from(ERASURE_KEY).where(ERASURE_KEY.ID.eq((short) 1)).fetchSingle(ERASURE_KEY.SECRET);
            }
            stored = k;
        }
        return k;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ErasureKey other && MessageDigest.isEqual(
                configured == null ? new byte[0] : configured, other.configured == null ? new byte[0] : other.configured);
    }

    @Override
    public int hashCode() {
        return configured == null ? 0 : 1;
    }

    /** Never the key. */
    @Override
    public String toString() {
        return configured == null ? "ErasureKey[stored in the database]" : "ErasureKey[configured, ****]";
    }
}
