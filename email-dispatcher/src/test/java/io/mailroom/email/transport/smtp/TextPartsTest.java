package io.mailroom.email.transport.smtp;

import jakarta.activation.DataHandler;
import jakarta.mail.Session;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import jakarta.mail.internet.MimeUtility;
import org.eclipse.angus.mail.util.QPEncoderStream;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link TextParts} against Jakarta Mail's and Angus's own choice and encoding, byte for byte. */
class TextPartsTest {

    /** Characters that decide quoted-printable's and the encoding choice's edge cases, often. */
    private static final String[] PIECES = {
            " ", "  ", "\t", "\r\n", "\n", "\r", "=", "a", "Mailroom", "<p>", ".", "đơn hàng", "Ü", "😀", "\u0001",
            "\u007f", "x".repeat(74), "y".repeat(75), "z".repeat(76), "w".repeat(1000), " \r\n", " \n", "= \n"};

    @Test
    void quotedPrintableIsAngusStreamsOutput() throws IOException {
        List<String> texts = new ArrayList<>(List.of("", " ", "a ", "a  \r\nb", "=\n", "\t\r\n", "a".repeat(75) + " ",
                "a".repeat(74) + "=", "a".repeat(73) + "é", "a".repeat(75) + "\r\r\n\n", "end with space "));
        Random random = new Random(28);
        for (int i = 0; i < 3_000; i++) {
            texts.add(randomText(random));
        }
        for (String text : texts) {
            byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
            assertThat(new String(TextParts.quotedPrintable(utf8), StandardCharsets.US_ASCII))
                    .as("quoted-printable of %s", escaped(text))
                    .isEqualTo(new String(angus(utf8), StandardCharsets.US_ASCII));
        }
    }

    @Test
    void encodingIsTheOneJakartaMailChooses() throws Exception {
        List<String> texts = new ArrayList<>(List.of("", "plain ascii\r\n", "x".repeat(999), "x".repeat(998) + "\n" + "y",
                "đơn hàng", "Đơn hàng 102 của bạn", "ab\u0001", "\u00e9\u00e9a"));
        Random random = new Random(29);
        for (int i = 0; i < 2_000; i++) {
            texts.add(randomText(random));
        }
        for (String text : texts) {
            String chosen = MimeUtility.getEncoding(new DataHandler(text, "text/plain; charset=UTF-8"));
            assertThat(TextParts.encodingOf(text.getBytes(StandardCharsets.UTF_8)).header)
                    .as("encoding of %s", escaped(text)).isEqualTo(chosen);
        }
    }

    @Test
    void aMessageWithThePartsIsTheMessageJakartaMailWrites() throws Exception {
        String html = "<html><body><h1>Cảm ơn bạn!</h1><p>Đơn hàng <b>102</b> = 3 món, tổng 1.250.000 ₫ </p>\n"
                + "<table style=\"width:100%\">" + "<tr><td>Áo thun</td><td>250.000 ₫</td></tr>".repeat(20)
                + "</table>\n</body></html>\n";
        String text = "Cảm ơn bạn!\nĐơn hàng 102 \n\tÁo thun x2\n" + "a line of ASCII only, ".repeat(60) + "\n";
        String[][] cases = {{text, html}, {"ascii only\r\nand short", "<p>ascii only</p>"},
                {"Đơn hàng của bạn đã được giao", "<p>Đơn hàng của bạn đã được giao</p>"}, {"", ""}};
        for (String[] c : cases) {
            MimeBodyPart oldText = new MimeBodyPart();
            oldText.setText(c[0], "UTF-8", "plain");
            MimeBodyPart oldHtml = new MimeBodyPart();
            oldHtml.setText(c[1], "UTF-8", "html");
            String expected = written(oldText, oldHtml);
            String actual = written(TextParts.of(c[0], "plain"), TextParts.of(c[1], "html"));
            assertThat(actual).isEqualTo(expected);

            MimeMessage read = new MimeMessage(Session.getInstance(new Properties()),
                    new ByteArrayInputStream(actual.getBytes(StandardCharsets.US_ASCII)));
            MimeMultipart parts = (MimeMultipart) read.getContent();
            assertThat(decodedLines(parts.getBodyPart(0).getContent())).isEqualTo(decodedLines(c[0]));
            assertThat(decodedLines(parts.getBodyPart(1).getContent())).isEqualTo(decodedLines(c[1]));
        }
    }

    /** A message of the two parts as alternatives, written with a fixed boundary, Message-ID and date. */
    private static String written(MimeBodyPart text, MimeBodyPart html) throws Exception {
        MimeMessage message = new MimeMessage(Session.getInstance(new Properties())) {
            @Override
            protected void updateMessageID() throws jakarta.mail.MessagingException {
                setHeader("Message-ID", "<email-order-102@mailroom.test>");
            }
        };
        message.setSubject("Đơn hàng 102", "UTF-8");
        message.setSentDate(new java.util.Date(1_796_000_000_000L));
        MimeMultipart alternative = new MimeMultipart("alternative");
        alternative.addBodyPart(text);
        alternative.addBodyPart(html);
        message.setContent(alternative);
        message.saveChanges();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        message.writeTo(out);
        return out.toString(StandardCharsets.US_ASCII).replaceAll("----=_Part_[0-9_.]+", "BOUNDARY");
    }

    /** Line ends written in any of the three forms, compared as one (quoted-printable makes them CRLF). */
    private static String decodedLines(Object content) {
        return content.toString().replace("\r\n", "\n").replace('\r', '\n');
    }

    private static byte[] angus(byte[] utf8) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        QPEncoderStream qp = new QPEncoderStream(out);
        qp.write(utf8);
        qp.flush();
        return out.toByteArray();
    }

    private static String randomText(Random random) {
        StringBuilder text = new StringBuilder();
        int pieces = random.nextInt(60);
        for (int i = 0; i < pieces; i++) {
            text.append(PIECES[random.nextInt(PIECES.length)]);
        }
        return text.toString();
    }

    private static String escaped(String text) {
        return text.length() > 120 ? text.substring(0, 120).replace("\r", "\\r").replace("\n", "\\n") + "..."
                : text.replace("\r", "\\r").replace("\n", "\\n");
    }
}
