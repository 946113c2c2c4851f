-- How many times an effect whose outcome was unknown has been deliberately repeated
-- (IdempotencyStore.reserveAgain). `reservations` counts every attempt, including the ones after a
-- known failure; this counts only the repeats that may have produced a second copy, so a bound on
-- them (MAILROOM_SMTP_AMBIGUOUS_RESENDS) does not count attempts that are known to have sent nothing.
ALTER TABLE idempotency_record ADD COLUMN repeats integer NOT NULL DEFAULT 0;
ALTER TABLE idempotency_record ADD CONSTRAINT idempotency_record_repeats_check
    CHECK (repeats >= 0 AND repeats < reservations);
