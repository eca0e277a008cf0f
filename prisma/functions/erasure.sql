-- A customer's erasure (docs/operating.md "A customer asks to be forgotten"; docs/architecture.md, invariant 15 and its
-- one exception): what the database itself does for it. The customer's lock, the one rule that removes a customer's
-- personal values from a stored JSON document, and the settlement line imported after an erasure that must not bring
-- the buyer's columns back.
--
-- Serves src/modules/erasure/erase-customer.ts (the erasure's one transaction), src/modules/shared/customers.ts (the
-- writers of a new row under a userId: registrations, orders, portal sessions) and the settlement import's INSERT
-- (reconciliation/import-settlement.ts, through the trigger below). The guards that let an erasure clear the personal
-- columns of kept records are guards.sql's.
--
-- Applied by the migrator after the versioned migrations whenever this file changes (src/db/apply-functions.ts).

-- The customer's lock: a transaction-scoped advisory lock on the userId (two-key form, class 7210033, so it never
-- meets the event sequencer's one-key lock). The erasure takes it exclusive; every writer of a new row under a userId
-- (a registration, an order, a portal session) takes it shared, so nothing is written under the old userId while an
-- erasure runs, and nothing waits for anything but an erasure of the same customer (a settlement import meets an
-- erasure through the table lock below instead). A hash collision between two customers only makes one wait for the other.
CREATE OR REPLACE FUNCTION "lock_customer"(user_id text, exclusive boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF exclusive THEN
    PERFORM pg_advisory_xact_lock(7210033, hashtext(user_id));
  ELSE
    PERFORM pg_advisory_xact_lock_shared(7210033, hashtext(user_id));
  END IF;
END $$;

-- A value as a URL's query string carries it: every UTF-8 byte but the unreserved ones (RFC 3986: letters, digits,
-- - . _ ~) percent-encoded in upper-case hex, as encodeURIComponent and URLSearchParams write an email address used
-- as a userId (a.b+c@shop.example is a.b%2Bc%40shop.example).
CREATE OR REPLACE FUNCTION "url_encoded"(value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(CASE WHEN b BETWEEN 48 AND 57 OR b BETWEEN 65 AND 90 OR b BETWEEN 97 AND 122 OR b IN (45, 46, 95, 126)
                                  THEN chr(b) ELSE '%' || upper(lpad(to_hex(b), 2, '0')) END, '' ORDER BY i), '')
    FROM (SELECT i, get_byte(convert_to(value, 'UTF8'), i) AS b
            FROM generate_series(0, octet_length(convert_to(value, 'UTF8')) - 1) AS i) AS bytes
$$;

-- A URL the erasure keeps (a registration's or an order's returnUrl, one inside a stored document) with the userId
-- replaced by the pseudonym, as written and as URL-encoded: the one rule for every kept URL.
CREATE OR REPLACE FUNCTION "erased_url"(url text, old_user_id text, pseudonym text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(replace(url, old_user_id, pseudonym), "url_encoded"(old_user_id), pseudonym)
$$;

-- Words an operator or a customer wrote (an audit entry's reason) with the userId replaced by the pseudonym where it
-- stands as a word of its own (not inside a longer word, so a short userId cannot alter other words). Every character
-- of the userId but letters and digits is escaped for the pattern.
CREATE OR REPLACE FUNCTION "erased_text"(value text, old_user_id text, pseudonym text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT regexp_replace(value, '(^|[^[:alnum:]_])' || regexp_replace(old_user_id, '([^[:alnum:]])', '\\\1', 'g') || '(?=$|[^[:alnum:]_])',
                        '\1' || pseudonym, 'g')
$$;

-- The fields of a stored JSON document that hold a person's data, whatever document and depth: names, phone numbers,
-- emails, masked card numbers, a consent's or a refund's reference, the sandbox window's `url` (it carries the window's
-- terms, the customer's among them).
CREATE OR REPLACE FUNCTION "personal_json_keys"() RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT ARRAY['userName', 'userPhoneNumber', 'phoneNumber', 'phone', 'cardNumber', 'customerName', 'customerEmail',
               'customerMobilePhone', 'email', 'userEmail', 'reference', 'url']
$$;

-- A stored JSON document (an event's snapshot, an audit entry's before/after, an idempotency record's answer, a gateway
-- answer) without the customer: at any depth, a personal field (personal_json_keys) becomes null, a string that is the
-- old userId becomes the pseudonym (and the portal's actor `customer:<userId>` names the pseudonym), and a return URL
-- has the userId replaced inside it (erased_url: as written and URL-encoded). Nothing else changes: amounts, ids, codes, times and the document's shape stay (renderers read it as before). The userId
-- is replaced only where a whole string is it, never inside other strings, so a short userId cannot alter a time or
-- a code that happens to contain its characters.
CREATE OR REPLACE FUNCTION "erased_json"(doc jsonb, old_user_id text, pseudonym text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  result jsonb;
BEGIN
  -- Most documents hold nothing of the customer (a payment's event, a gateway's answer without names): one look at the
  -- whole text (jsonb writes `"key": value`) answers them as they are, without walking them.
  IF jsonb_typeof(doc) IN ('object', 'array') AND strpos(doc::text, old_user_id) = 0 AND strpos(doc::text, "url_encoded"(old_user_id)) = 0
     AND doc::text !~ ('"(' || array_to_string("personal_json_keys"(), '|') || ')": (?!null)') THEN
    RETURN doc;
  END IF;
  CASE jsonb_typeof(doc)
  WHEN 'object' THEN
    SELECT coalesce(jsonb_object_agg(e.key, CASE
        WHEN e.key = ANY ("personal_json_keys"()) THEN 'null'::jsonb
        WHEN e.key = 'returnUrl' AND jsonb_typeof(e.value) = 'string'
          THEN to_jsonb("erased_url"(e.value #>> '{}', old_user_id, pseudonym))
        ELSE "erased_json"(e.value, old_user_id, pseudonym) END), '{}'::jsonb)
      INTO result FROM jsonb_each(doc) e;
    RETURN result;
  WHEN 'array' THEN
    SELECT coalesce(jsonb_agg("erased_json"(e.value, old_user_id, pseudonym) ORDER BY e.n), '[]'::jsonb)
      INTO result FROM jsonb_array_elements(doc) WITH ORDINALITY e(value, n);
    RETURN result;
  WHEN 'string' THEN
    RETURN CASE doc #>> '{}'
      WHEN old_user_id THEN to_jsonb(pseudonym)
      WHEN 'customer:' || old_user_id THEN to_jsonb('customer:' || pseudonym)
      ELSE doc END;
  ELSE
    RETURN doc;
  END CASE;
END $$;

-- The userId of the customer whose payment a settlement line names (by the payment's or a refund attempt's
-- transactionId, else by an attempt's orderId; each by its index): the subscription's, the one-time order's or the
-- registration's. NULL when the line matches no payment of ours.
CREATE OR REPLACE FUNCTION "settlement_line_customer"(transaction_id text, order_id text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce(s."userId", o."userId", r."userId")
    FROM "payments" p
    LEFT JOIN "subscriptions" s ON s."id" = p."subscriptionId"
    LEFT JOIN "orders" o ON o."id" = p."oneTimeOrderId"
    LEFT JOIN "registrations" r ON r."id" = p."registrationId"
   WHERE p."id" = coalesce(
     (SELECT p2."id" FROM "payments" p2 WHERE p2."transactionId" = transaction_id),
     (SELECT a."paymentId" FROM "payment_attempts" a WHERE a."transactionId" = transaction_id LIMIT 1),
     (SELECT a."paymentId" FROM "payment_attempts" a WHERE a."orderId" = order_id LIMIT 1))
$$;

-- A settlement line of an erased customer's payment keeps the file's money, ids and times but not its other columns
-- (`extra`: the buyer's name, phone number, whatever the gateway adds): imported after the erasure, it is stored without
-- them. An import that meets a running erasure waits for the lock the erasure holds on settlement_lines (SHARE ROW
-- EXCLUSIVE, taken right after the customer's lock: src/modules/erasure/erase-customer.ts) and inserts once the erasure
-- has committed; this function's query takes a new snapshot (a VOLATILE function's queries do), so it sees that erasure.
-- One table lock per import, never a lock per line: a shared advisory lock per line's customer held to the end of the
-- import's transaction ran out of the lock table's shared memory on a 100,000-line file. Without any erasure the line
-- costs one probe of an empty table. The line still matches its payment by transactionId and orderId, which stay.
CREATE OR REPLACE FUNCTION "settlement_line_without_erased_buyer"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "erasures") THEN RETURN NEW; END IF;
  IF EXISTS (SELECT 1 FROM "erasures" WHERE "pseudonym" = "settlement_line_customer"(NEW."transactionId", NEW."orderId")) THEN
    NEW."extra" := NULL;
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER "settlement_lines_without_erased_buyer" BEFORE INSERT ON "settlement_lines" FOR EACH ROW
  WHEN (NEW."extra" IS NOT NULL)
  EXECUTE FUNCTION "settlement_line_without_erased_buyer"();
