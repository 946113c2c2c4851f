package io.mailroom.email.transport;

import io.mailroom.outbox.InvalidSettingException;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Collections;
import java.util.Locale;
import java.util.Objects;

/**
 * The certificates one transport trusts instead of the JDK's default CAs, for a provider or relay
 * whose certificate comes from a private CA or is self-signed, without JVM-wide
 * {@code -Djavax.net.ssl.trustStore} flags. Host name checking stays on: the certificate must
 * still be issued for the host the transport connects to.
 *
 * <p>Read from {@code <PREFIX>} (the file), {@code <PREFIX>_PASSWORD} and {@code <PREFIX>_TYPE}
 * ({@code PKCS12}, the default, {@code JKS}, or {@code PEM}: one or more X.509 certificates as
 * text), e.g. {@code MAILROOM_SMTP_TRUSTSTORE}. The file is read once, when the configuration is
 * built, so a missing file, a wrong password or a store without certificates stops start-up with
 * the setting named instead of failing every send later.
 */
public final class TrustStore {

    /** How the file is encoded. */
    public enum Type { PKCS12, JKS, PEM }

    public static final Type DEFAULT_TYPE = Type.PKCS12;

    private final String setting;
    private final Path path;
    private final Type type;
    private final int certificates;
    private final SSLContext sslContext;

    private TrustStore(String setting, Path path, Type type, int certificates, SSLContext sslContext) {
        this.setting = setting;
        this.path = path;
        this.type = type;
        this.certificates = certificates;
        this.sslContext = sslContext;
    }

    /**
     * Reads the store now.
     *
     * @param setting  the variable naming the file, used in error messages ({@code MAILROOM_SMTP_TRUSTSTORE})
     * @param password null for none (a PEM file has none)
     */
    public static TrustStore load(String setting, Path path, String password, Type type) {
        Objects.requireNonNull(setting, "setting");
        if (path == null) {
            throw new InvalidSettingException(setting, setting + " must name a truststore file");
        }
        if (type == null) {
            throw new InvalidSettingException(setting + "_TYPE", setting + "_TYPE must be one of PKCS12, JKS, PEM");
        }
        if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
            throw new InvalidSettingException(setting, setting + " names no readable file: " + path);
        }
        if (type == Type.PEM && password != null) {
            throw new InvalidSettingException(setting + "_PASSWORD", setting + "_PASSWORD is set, but a PEM truststore has no password");
        }
        KeyStore store = type == Type.PEM ? readPem(setting, path) : readKeyStore(setting, path, password, type);
        int count = countCertificates(setting, store);
        if (count == 0) {
            throw new InvalidSettingException(setting, setting + " (" + path + ") holds no certificates"
                    + (type == Type.PKCS12 ? " readable with " + setting + "_PASSWORD (is it set and right?)" : ""));
        }
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return new TrustStore(setting, path, type, count, context);
        } catch (GeneralSecurityException e) {
            throw new InvalidSettingException(setting, setting + " (" + path + ") cannot be used for TLS: " + e.getClass().getSimpleName());
        }
    }

    /** A TLS context that trusts exactly this store's certificates. */
    public SSLContext sslContext() {
        return sslContext;
    }

    /** The variable this store was read from, e.g. {@code MAILROOM_SMTP_TRUSTSTORE}. */
    public String setting() {
        return setting;
    }

    public Path path() {
        return path;
    }

    public Type type() {
        return type;
    }

    public int certificates() {
        return certificates;
    }

    @Override
    public String toString() {
        return path + " (" + type.name().toLowerCase(Locale.ROOT) + ", " + certificates + (certificates == 1 ? " certificate)" : " certificates)");
    }

    private static KeyStore readKeyStore(String setting, Path path, String password, Type type) {
        try (InputStream in = Files.newInputStream(path)) {
            KeyStore store = KeyStore.getInstance(type.name());
            store.load(in, password == null ? null : password.toCharArray());
            return store;
        } catch (IOException e) {
            if (e.getCause() instanceof UnrecoverableKeyException) {
                throw new InvalidSettingException(setting + "_PASSWORD", setting + "_PASSWORD does not open " + path);
            }
            throw new InvalidSettingException(setting, setting + " (" + path + ") cannot be read as " + type + " (wrong "
                    + setting + "_TYPE?): " + e.getClass().getSimpleName());
        } catch (GeneralSecurityException e) {
            throw new InvalidSettingException(setting, setting + " (" + path + ") cannot be read as " + type + ": "
                    + e.getClass().getSimpleName());
        }
    }

    private static KeyStore readPem(String setting, Path path) {
        Collection<? extends Certificate> certs;
        try (InputStream in = Files.newInputStream(path)) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        } catch (IOException | GeneralSecurityException e) {
            throw new InvalidSettingException(setting, setting + " (" + path + ") is not a PEM file of X.509 certificates: "
                    + e.getClass().getSimpleName());
        }
        if (certs.isEmpty()) {
            throw new InvalidSettingException(setting, setting + " (" + path + ") is not a PEM file of X.509 certificates: none found");
        }
        try {
            KeyStore store = KeyStore.getInstance(Type.PKCS12.name());
            store.load(null, null);
            int i = 0;
            for (Certificate cert : certs) {
                store.setCertificateEntry("cert-" + i++, cert);
            }
            return store;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot build an in-memory truststore", e);
        }
    }

    private static int countCertificates(String setting, KeyStore store) {
        try {
            int n = 0;
            for (String alias : Collections.list(store.aliases())) {
                if (store.getCertificate(alias) != null) {
                    n++;
                }
            }
            return n;
        } catch (GeneralSecurityException e) {
            throw new InvalidSettingException(setting, setting + " cannot be listed: " + e.getClass().getSimpleName());
        }
    }
}
