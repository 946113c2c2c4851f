package io.mailroom.email.transport.smtp;

import jakarta.mail.Address;
import jakarta.mail.Message;
import jakarta.mail.MessagingException;
import jakarta.mail.Provider;
import jakarta.mail.SendFailedException;
import jakarta.mail.Session;
import jakarta.mail.URLName;
import jakarta.mail.internet.AddressException;
import jakarta.mail.internet.InternetAddress;
import org.eclipse.angus.mail.smtp.SMTPAddressFailedException;
import org.eclipse.angus.mail.smtp.SMTPMessage;
import org.eclipse.angus.mail.smtp.SMTPOutputStream;
import org.eclipse.angus.mail.smtp.SMTPSendFailedException;
import org.eclipse.angus.mail.smtp.SMTPSenderFailedException;
import org.eclipse.angus.mail.smtp.SMTPTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Angus's SMTP transport with command pipelining (RFC 2920): when the server's EHLO answer
 * advertised {@code PIPELINING}, {@code MAIL FROM}, every {@code RCPT TO} and {@code DATA} leave in
 * one write, and their replies are then read in order. A message then costs two round trips (the
 * envelope, the data) instead of 2 + recipients. Without {@code PIPELINING}, or when the session is
 * configured for an envelope this class does not build (below), every call goes to Angus unchanged.
 *
 * <p>The replies are judged as Angus judges them one at a time, and end in the same exceptions, so
 * {@link SmtpFailures} classifies a pipelined failure exactly as an unpipelined one: a refused
 * {@code MAIL FROM} is an {@link SMTPSendFailedException} (with an {@link SMTPSenderFailedException}
 * for 501/503/550/551/553), refused recipients a {@link SendFailedException} chaining one
 * {@link SMTPAddressFailedException} each, a refused {@code DATA} an {@link SMTPSendFailedException}.
 * No message data is written unless {@code DATA} was answered {@code 354} and the envelope was
 * accepted in full. The transaction left open by a refusal is ended with {@code RSET}, checked for
 * {@code 250}, so the session can carry the next message; if {@code DATA} was answered {@code 354}
 * although the envelope failed, the server waits for data that will not come, and the connection
 * is closed instead (the server discards an unfinished message).
 *
 * <p>Why a private field is read: Angus writes every command through a private method that flushes
 * it on its own, and offers no protected way to write a line without flushing. Several commands in
 * one flush (so one TCP segment: no Nagle or delayed-ACK stall between them, and one read on the
 * server) need the command stream itself, Angus's {@code serverOutput}; its replies are still read
 * through Angus ({@link #readServerResponse()}), which keeps {@code getLastReturnCode()} and the
 * protocol trace right. If that field cannot be read (another Angus version, or Angus on the
 * module path), pipelining is off and the transport is plain Angus.
 */
public final class PipeliningSmtpTransport extends SMTPTransport {

    /** The provider that {@link Session#getTransport(Provider)} instantiates this class from. */
    static final Provider PROVIDER = new Provider(Provider.Type.TRANSPORT, "smtp", PipeliningSmtpTransport.class.getName(),
            "Mailroom", "1");

    private static final Logger log = LoggerFactory.getLogger(PipeliningSmtpTransport.class);
    private static final VarHandle SERVER_OUTPUT = serverOutputHandle();
    private static final byte[] CRLF = {'\r', '\n'};
    private static final int OK = 250;
    private static final int START_MAIL_INPUT = 354;
    /**
     * Session settings with which Angus adds to the envelope (DSN, SMTPUTF8, AUTH=, extensions) or
     * sends in other ways (BDAT, partial sends, success reports): with any of them set, Angus sends.
     */
    private static final List<String> ENVELOPE_SETTINGS = List.of("mail.smtp.dsn.notify", "mail.smtp.dsn.ret",
            "mail.smtp.submitter", "mail.smtp.mailextension", "mail.mime.allowutf8", "mail.smtp.sendpartial",
            "mail.smtp.reportsuccess", "mail.smtp.chunksize");

    private final boolean mayPipeline;
    private volatile boolean open;

    // Valid during one sendMessage call, which Angus synchronizes on this transport.
    private boolean pipelined;
    private Message message;
    private Address[] recipients;
    private SMTPOutputStream dataStream;

    public PipeliningSmtpTransport(Session session, URLName url) {
        super(session, url);
        this.mayPipeline = SERVER_OUTPUT != null && plainEnvelope(session.getProperties());
    }

    /** Whether the next message will be pipelined: the server advertised PIPELINING and nothing rules it out. */
    public synchronized boolean pipelines() {
        return mayPipeline && supportsExtension("PIPELINING");
    }

    /**
     * Whether the connection is still open, without asking the server (unlike {@link #isConnected()},
     * which sends NOOP). False once Angus, or this class, closed it after a failure.
     */
    public boolean hasOpenConnection() {
        return open;
    }

    @Override
    protected synchronized void setConnected(boolean connected) {
        super.setConnected(connected);
        open = connected;
    }

    @Override
    public synchronized void sendMessage(Message message, Address[] addresses) throws MessagingException {
        this.message = message;
        pipelined = pipelines() && asciiEnvelope(addresses);
        this.recipients = addresses;
        try {
            super.sendMessage(message, addresses);
        } finally {
            pipelined = false;
            this.message = null;
            this.recipients = null;
            dataStream = null;
        }
    }

    // Angus calls mailFrom(), rcptTo(), data(), finishData() in that order; pipelined, data() does
    // the whole envelope.

    @Override
    protected void mailFrom() throws MessagingException {
        if (!pipelined) {
            super.mailFrom();
        }
    }

    @Override
    protected void rcptTo() throws MessagingException {
        if (!pipelined) {
            super.rcptTo();
        }
    }

    @Override
    protected OutputStream data() throws MessagingException {
        if (!pipelined) {
            return super.data();
        }
        String from = envelopeFrom();
        List<String> commands = new ArrayList<>(recipients.length + 2);
        commands.add("MAIL FROM:" + bracketed(from));
        for (Address a : recipients) {
            commands.add("RCPT TO:" + bracketed(((InternetAddress) a).getAddress()));
        }
        commands.add("DATA");
        OutputStream out = (OutputStream) SERVER_OUTPUT.get(this);
        writeAll(out, commands);

        // Replies come in the order of the commands. The server may close the connection early
        // (421 to MAIL FROM, then gone): what was answered before that still decides, as it would
        // have one command at a time.
        int[] codes = new int[commands.size()];
        String[] replies = new String[commands.size()];
        int received = 0;
        MessagingException readFailure = null;
        try {
            while (received < commands.size()) {
                codes[received] = readServerResponse();
                replies[received] = getLastServerResponse();
                if (codes[received] == -1) {
                    break; // end of stream, or a reply without a code: nothing more can be read in order
                }
                received++;
            }
        } catch (MessagingException e) {
            readFailure = e; // Angus's wrapping of the IOException
        }
        boolean complete = received == commands.size();
        int dataCode = complete ? codes[codes.length - 1] : -1;

        MessagingException refused = null;
        if (received > 0 && codes[0] != OK) {
            refused = senderRefused(commands.get(0), codes[0], replies[0], from);
        } else if (received > 0) {
            refused = recipientsRefused(commands, codes, replies, Math.min(received - 1, recipients.length));
            if (refused == null && complete && dataCode != START_MAIL_INPUT) {
                refused = new SMTPSendFailedException("DATA", dataCode, replies[replies.length - 1], null, null, recipients, null);
            }
        }
        if (!complete) {
            closeQuietly();
            if (refused != null) {
                throw refused;
            }
            if (readFailure != null) {
                throw readFailure;
            }
            throw new SMTPSendFailedException(commands.get(received), -1, replies[received], null, null, recipients, null);
        }
        if (refused == null) {
            dataStream = new SMTPOutputStream(out);
            return dataStream;
        }
        if (dataCode == START_MAIL_INPUT) {
            // The server waits for data we will not send. Angus's close() still writes QUIT, which
            // lands in that data, but no final dot follows: the unfinished message is discarded.
            closeQuietly();
        } else {
            reset();
        }
        throw refused;
    }

    @Override
    protected void finishData() throws IOException, MessagingException {
        if (!pipelined) {
            super.finishData();
            return;
        }
        dataStream.ensureAtBOL();
        sendCommand(".");
        int code = readServerResponse();
        if (code != OK) {
            String reply = getLastServerResponse();
            if (code == -1) {
                closeQuietly();
            } else {
                reset();
            }
            throw new SMTPSendFailedException(".", code, reply, null, null, recipients, null);
        }
    }

    /** Angus's rule: MAIL FROM refused with 501/503/550/551/553 names the sender as invalid. */
    private static MessagingException senderRefused(String command, int code, String reply, String from) {
        SMTPSendFailedException e = new SMTPSendFailedException(command, code, reply, null, null, null, null);
        if (code == 501 || code == 503 || code == 550 || code == 551 || code == 553) {
            try {
                e.setNextException(new SMTPSenderFailedException(new InternetAddress(from), command, code, reply));
            } catch (AddressException ignored) {
                // an envelope sender Angus could not parse either; the reply code is still there
            }
        }
        return e;
    }

    /**
     * Angus's rule without partial sends: any recipient answered other than 2xx fails the message,
     * reported as a {@link SendFailedException} chaining one {@link SMTPAddressFailedException} per
     * refused recipient, with the addresses split into invalid (5xx) and valid-unsent (4xx, accepted).
     * Only the first {@code answered} recipients are judged (the others got no reply).
     */
    private MessagingException recipientsRefused(List<String> commands, int[] codes, String[] replies, int answered) {
        List<Address> valid = new ArrayList<>();
        List<Address> invalid = new ArrayList<>();
        MessagingException chain = null;
        for (int i = 0; i < answered; i++) {
            int code = codes[i + 1];
            InternetAddress a = (InternetAddress) recipients[i];
            if (code >= 200 && code < 300) {
                valid.add(a);
                continue;
            }
            if (code >= 500 && code < 600) {
                invalid.add(a);
            } else {
                valid.add(a);
            }
            SMTPAddressFailedException failed = new SMTPAddressFailedException(a, commands.get(i + 1), code, replies[i + 1]);
            if (chain == null) {
                chain = failed;
            } else {
                chain.setNextException(failed);
            }
        }
        if (chain == null) {
            return null;
        }
        return new SendFailedException("Invalid Addresses", chain, null, valid.toArray(new Address[0]),
                invalid.toArray(new Address[0]));
    }

    /** Ends a refused transaction so the session can take another; closes it if the server does not agree. */
    private void reset() {
        try {
            if (simpleCommand("RSET") == OK) {
                return;
            }
            log.debug("RSET after a refused SMTP transaction was answered {}; closing the connection", getLastReturnCode());
        } catch (MessagingException e) {
            log.debug("RSET after a refused SMTP transaction failed: {}", e.toString());
        }
        closeQuietly();
    }

    private void writeAll(OutputStream out, List<String> commands) throws MessagingException {
        try {
            for (String command : commands) {
                out.write(command.getBytes(StandardCharsets.US_ASCII));
                out.write(CRLF);
            }
            out.flush();
        } catch (IOException | RuntimeException e) {
            // Angus's wording and wrapping for a failed command write, so the connection is closed alike.
            throw new MessagingException("Can't send command to SMTP host", e);
        }
    }

    /**
     * As Angus: the message's own envelope sender (VERP), else the session's {@code mail.smtp.from},
     * else the message's first From address.
     */
    private String envelopeFrom() throws MessagingException {
        String from = messageEnvelopeFrom();
        if (from == null || from.isEmpty()) {
            from = session.getProperty("mail.smtp.from");
        }
        if (from != null && !from.isEmpty()) {
            return from;
        }
        Address[] fromHeader = message.getFrom();
        if (fromHeader != null && fromHeader.length > 0 && fromHeader[0] instanceof InternetAddress ia) {
            return ia.getAddress();
        }
        InternetAddress local = InternetAddress.getLocalAddress(session);
        if (local == null) {
            throw new MessagingException("can't determine local email address");
        }
        return local.getAddress();
    }

    private String messageEnvelopeFrom() {
        return message instanceof SMTPMessage m ? m.getEnvelopeFrom() : null;
    }

    private void closeQuietly() {
        try {
            close();
        } catch (MessagingException | RuntimeException e) {
            log.debug("Closing the SMTP connection failed: {}", e.toString());
        }
    }

    private static String bracketed(String address) {
        return !address.startsWith("<") && !address.endsWith(">") ? "<" + address + ">" : address;
    }

    /**
     * Commands must be plain ASCII without line breaks, as Angus writes them without SMTPUTF8; a
     * group address is expanded by Angus alone. Anything else goes the unpipelined way.
     */
    private boolean asciiEnvelope(Address[] addresses) {
        if (addresses == null || addresses.length == 0) {
            return false;
        }
        String from = messageEnvelopeFrom();
        if (from == null || from.isEmpty()) {
            from = session.getProperty("mail.smtp.from");
        }
        if (from != null && !safeInCommand(from)) {
            return false;
        }
        for (Address a : addresses) {
            if (!(a instanceof InternetAddress ia) || ia.isGroup() || !safeInCommand(ia.getAddress())) {
                return false;
            }
        }
        return true;
    }

    private static boolean safeInCommand(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }

    private static boolean plainEnvelope(Properties p) {
        for (String key : ENVELOPE_SETTINGS) {
            String value = p.getProperty(key);
            if (value != null && !value.isEmpty() && !value.equals("false") && !value.equals("0")) {
                return false;
            }
        }
        return true;
    }

    private static VarHandle serverOutputHandle() {
        try {
            return MethodHandles.privateLookupIn(SMTPTransport.class, MethodHandles.lookup())
                    .findVarHandle(SMTPTransport.class, "serverOutput", OutputStream.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LoggerFactory.getLogger(PipeliningSmtpTransport.class)
                    .warn("SMTP pipelining is off: Angus's command stream is not accessible ({})", e.toString());
            return null;
        }
    }
}
