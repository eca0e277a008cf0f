-- The console in Korean as well (issue 32): the language an operator chose on a console page, kept with their
-- sign-in on the server, as the session itself is. NULL (every session signed in before, and every sign-in that chose
-- nothing) speaks CONSOLE_LOCALE; only the two languages of the message catalogs are accepted.
ALTER TABLE "console_sessions" ADD COLUMN "locale" TEXT;
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_locale_check" CHECK ("locale" IN ('ko', 'en'));
