package io.mailroom.support;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * A person's access: a name, a role, and the SHA-256 of their token. The token itself is never
 * kept: it is hashed as the configuration is read, and a presented token is compared by its hash,
 * in constant time ({@link MessageDigest#isEqual}).
 */
public final class ApiToken {

    public static final int MIN_TOKEN_LENGTH = 16;
    public static final int MAX_TOKEN_LENGTH = 512;

    private final String name;
    private final Role role;
    private final byte[] sha256;

    private ApiToken(String name, Role role, byte[] sha256) {
        this.name = name;
        this.role = role;
        this.sha256 = sha256;
    }

    /** From a plain token; only its hash is kept. */
    public static ApiToken of(String name, Role role, String token) {
        Objects.requireNonNull(token, "token");
        return new ApiToken(name, role, sha256(token));
    }

    public String name() {
        return name;
    }

    public Role role() {
        return role;
    }

    /** Whether {@code presentedHash} (the SHA-256 of a presented token) is this token's, in constant time. */
    boolean matches(byte[] presentedHash) {
        return MessageDigest.isEqual(sha256, presentedHash);
    }

    static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Never shows the token or its hash. */
    @Override
    public String toString() {
        return name + ":" + role.word() + ":****";
    }
}
