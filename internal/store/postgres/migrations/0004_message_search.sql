-- 0004_message_search, as the SQLite store's 0010 (issue 16): the
-- full-text index of every session's messages (user, assistant and tool
-- results; system prompts are the same in every session and left out),
-- with PostgreSQL's own text search: a tsvector column of messages kept by
-- the database itself (a stored generated column, computed in the
-- transaction that writes the message, and for the messages already there
-- when this migration adds it) and a GIN index on it.
--
-- The text indexed is a message's text plus the names and arguments of
-- the tools it calls; a row that is not JSON is indexed as it is rather
-- than failing the write. Words are what SQLite's unicode61 tokenizer
-- makes them: ASCII punctuation separates words (so "./parser" holds the
-- word parser and run_command the words run and command), and they are
-- stemmed by the English Snowball stemmer without stop words (so "the"
-- and "for" can be searched, and "parser for" is a phrase of two words).
-- Unlike SQLite's index, diacritics are kept ("café" is not "cafe"), and
-- only the first 200,000 characters of a message are indexed, as a
-- tsvector holds at most 1 MB.
--
-- n numbers messages in the order they were stored, across sessions: a
-- query too common to rank gets the newest matches, read backwards from
-- its index.

CREATE TEXT SEARCH DICTIONARY mx_claw_english_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION mx_claw_search (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION mx_claw_search
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH mx_claw_english_stem;

-- mx_claw_search_text is the text of a message as stored (its JSON) that
-- search indexes and cuts snippets from.
CREATE FUNCTION mx_claw_search_text(content text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    j    jsonb;
    body text;
BEGIN
    BEGIN
        j := content::jsonb;
    EXCEPTION WHEN others THEN
        RETURN content;
    END;
    IF jsonb_typeof(j) <> 'object' THEN
        RETURN content;
    END IF;
    body := coalesce(j ->> 'content', '');
    IF jsonb_typeof(j -> 'tool_calls') = 'array' THEN
        body := body || coalesce((
            SELECT ' ' || string_agg(coalesce(c ->> 'name', '') || ' ' || coalesce(c ->> 'arguments', ''), ' ')
            FROM jsonb_array_elements(j -> 'tool_calls') AS c), '');
    END IF;
    RETURN body;
END $$;

-- mx_claw_search_words turns runs of ASCII punctuation (the ranges !-/,
-- :-@, [-` and {-~) into spaces, so that the text search parser sees only
-- words and numbers, in the index and in the queries alike. (A regular
-- expression: translate() is eight times slower at this.)
CREATE FUNCTION mx_claw_search_words(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT regexp_replace(t, '[!-/:-@[-`{-~]+', ' ', 'g')
$$;

-- mx_claw_search_term is the query of one term of a search: its words in
-- order (a phrase), the last one a prefix when prefix is set.
CREATE FUNCTION mx_claw_search_term(term text, prefix boolean) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN prefix AND numnode(q) > 0 THEN (q::text || ':*')::tsquery ELSE q END
    FROM phraseto_tsquery('mx_claw_search', mx_claw_search_words(term)) AS q
$$;

ALTER TABLE messages
    ADD COLUMN n bigint GENERATED ALWAYS AS IDENTITY,
    ADD COLUMN search tsvector GENERATED ALWAYS AS (
        CASE WHEN role <> 'system' THEN
            to_tsvector('mx_claw_search'::regconfig, mx_claw_search_words(left(mx_claw_search_text(content), 200000)))
        END) STORED;
CREATE INDEX messages_search ON messages USING gin (search);
CREATE UNIQUE INDEX messages_n ON messages (n);
