package io.mailroom.delivery.mime;

import jakarta.mail.Session;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import jakarta.mail.internet.MimeUtility;
import jakarta.mail.util.StreamProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class MimeStreamsTest {

    private static final String ANGUS = "org.eclipse.angus.mail.util.MailStreamProvider";

    private String before;

    @BeforeEach
    void remember() {
        before = System.getProperty(MimeStreams.PROPERTY);
        System.clearProperty(MimeStreams.PROPERTY);
    }

    @AfterEach
    void restore() {
        if (before == null) {
            System.clearProperty(MimeStreams.PROPERTY);
        } else {
            System.setProperty(MimeStreams.PROPERTY, before);
        }
    }

    @Test
    void namesTheProviderTheSearchFinds() throws Exception {
        String searched = StreamProvider.provider().getClass().getName();

        MimeStreams.pinOnce();

        assertThat(searched).isEqualTo(ANGUS);
        assertThat(System.getProperty(MimeStreams.PROPERTY)).isEqualTo(ANGUS);
        assertThat(StreamProvider.provider().getClass().getName()).isEqualTo(ANGUS);
        // and MIME still works through it: a message written and read back, a word encoded and decoded
        MimeMessage message = new MimeMessage(Session.getInstance(new Properties()));
        message.setSubject("Xác nhận đơn hàng 102", "UTF-8");
        MimeMultipart multipart = new MimeMultipart("alternative");
        MimeBodyPart part = new MimeBodyPart();
        part.setText("Đơn hàng 102 đã được xác nhận", "UTF-8");
        multipart.addBodyPart(part);
        message.setContent(multipart);
        message.saveChanges();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        message.writeTo(out);
        assertThat(out.toString(StandardCharsets.US_ASCII)).contains("Content-Transfer-Encoding: base64");
        MimeMessage read = new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(out.toByteArray()));
        assertThat(read.getSubject()).isEqualTo("Xác nhận đơn hàng 102");
        assertThat(((MimeMultipart) read.getContent()).getBodyPart(0).getContent()).isEqualTo("Đơn hàng 102 đã được xác nhận");
        String word = MimeUtility.encodeWord("Xác nhận đơn hàng", "UTF-8", "Q");
        assertThat(word).startsWith("=?UTF-8?Q?");
        assertThat(MimeUtility.decodeWord(word)).isEqualTo("Xác nhận đơn hàng");
    }

    @Test
    void keepsAProviderTheApplicationNamed() {
        System.setProperty(MimeStreams.PROPERTY, "com.example.TheirStreamProvider");

        MimeStreams.pinOnce();

        assertThat(System.getProperty(MimeStreams.PROPERTY)).isEqualTo("com.example.TheirStreamProvider");
    }

    @Test
    void leavesTheSearchOnWhenTheThreadsClassLoaderCannotSeeTheProvider() throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader own = thread.getContextClassLoader();
        // a loader that sees the JDK only: FactoryFinder would fail to load a named class through it
        try (URLClassLoader jdkOnly = new URLClassLoader(new URL[0], ClassLoader.getPlatformClassLoader())) {
            thread.setContextClassLoader(jdkOnly);
            MimeStreams.pinOnce();
        } finally {
            thread.setContextClassLoader(own);
        }

        assertThat(System.getProperty(MimeStreams.PROPERTY)).isNull();
    }
}
