package io.mailroom.support.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.support.AccessDeniedException;
import io.mailroom.support.ActionAnswer;
import io.mailroom.support.ActionResult;
import io.mailroom.support.InvalidParameterException;
import io.mailroom.support.SupportJson;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * The frame of every support command: runs it, prints JSON or text, and turns every failure into a
 * one-line message on stderr and an {@link ExitCodes exit code}, never a stack trace.
 */
abstract class CliCommand implements Callable<Integer> {

    @ParentCommand
    SupportCli cli;

    @Spec
    CommandSpec spec;

    /** Does the work; returns the exit code. */
    abstract int run(PrintWriter out) throws Exception;

    @Override
    public final Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return run(out);
        } catch (InvalidParameterException e) {
            err.println("error: " + e.getMessage());
            return ExitCodes.INVALID_INPUT;
        } catch (AccessDeniedException e) {
            err.println("error: " + e.getMessage());
            return ExitCodes.NOT_ALLOWED;
        } catch (io.mailroom.support.HttpFailure e) {
            err.println("error: " + e.getMessage());
            return switch (e.status()) {
                case 400 -> ExitCodes.INVALID_INPUT;
                case 404 -> ExitCodes.NOT_FOUND;
                case 409 -> ExitCodes.NOT_ALLOWED;
                default -> ExitCodes.FAILURE;
            };
        } catch (RuntimeException e) {
            String state = SqlStates.sqlState(e);
            if (SqlStates.isConnectionLoss(e) || (state == null && SqlStates.sqlException(e).isPresent())) {
                err.println("error: cannot reach the database" + (state == null ? "" : " (SQLSTATE " + state + ")")
                        + "; check " + cli.urlHint());
                return ExitCodes.UNAVAILABLE;
            }
            if (state != null && state.startsWith("28")) {
                err.println("error: the database refused the credentials (SQLSTATE " + state + ")");
                return ExitCodes.UNAVAILABLE;
            }
            if (state != null && state.equals("3D000")) {
                err.println("error: the database named in --db-url does not exist");
                return ExitCodes.UNAVAILABLE;
            }
            err.println("error: " + e.getClass().getSimpleName() + (state == null ? "" : " (SQLSTATE " + state + ")")
                    + (e.getMessage() == null ? "" : ": " + firstLine(e.getMessage())));
            return ExitCodes.FAILURE;
        } catch (Exception e) {
            err.println("error: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + firstLine(e.getMessage())));
            return ExitCodes.FAILURE;
        } finally {
            out.flush();
            err.flush();
        }
    }

    boolean json() {
        return cli.json();
    }

    void printJson(PrintWriter out, Object value) throws JsonProcessingException {
        out.println(SupportJson.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(value));
    }

    /** Prints the result of an email action and returns its exit code. */
    int report(PrintWriter out, ActionResult result, String key) throws JsonProcessingException {
        PrintWriter err = spec.commandLine().getErr();
        switch (result) {
            case ActionResult.Applied a -> {
                if (json()) {
                    printJson(out, ActionAnswer.of(a, key));
                } else {
                    Printer.applied(out, a, key);
                }
                return ExitCodes.OK;
            }
            case ActionResult.Busy b -> {
                err.println("busy: " + b.message());
                return ExitCodes.BUSY;
            }
            case ActionResult.NotFound n -> {
                err.println("not found: " + n.message());
                return ExitCodes.NOT_FOUND;
            }
            case ActionResult.NotAllowed n -> {
                err.println("not allowed: " + n.message());
                return ExitCodes.NOT_ALLOWED;
            }
        }
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
