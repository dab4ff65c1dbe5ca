"""The evidence gate (gemdoc/evidence.py, issue #14 item 2): each typed part judged on its own, an API
the bundle documents named anywhere is evidence, missing ordinary English words weigh less than missing
technical ones, a refusal names the candidates it rejected, and --no-refusal really ranks (text and JSON).
The CLI runs against the real store, FTS5 and embedded vectors of test_agent's project."""

import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import test_agent
from test_agent import cli, reply

from gemdoc import embed, evidence, paths, terms
from gemdoc.chunk import Chunk
from gemdoc.store import GemRecord, Writer

project = test_agent.project  # the fixture: a store filled directly and embedded with the real model

PARTIAL = "retry a neural network job on gpu tensors"  # one word of five in the bundle: refused


def test_no_refusal_ranks_in_text_and_says_refused_false(project):
    assert reply("search", "-C", str(project), PARTIAL)["refused"] is True
    for command in ("search", "query"):
        data = reply(command, "-C", str(project), "--no-refusal", PARTIAL)
        assert data["refused"] is False and data["results"] and data["diagnosis"] is None
        text = cli(command, "-C", str(project), "--no-refusal", PARTIAL).output
        assert "no answer in this bundle" not in text and "Retry#retry_on" in text


def test_a_refusal_names_the_nearest_candidates_it_rejected(project):
    for command in ("search", "query"):
        data = reply(command, "-C", str(project), PARTIAL)
        assert data["results"] == [] and data["diagnosis"]["nearest"]
        assert all(n.startswith("retrier 2.0.0 ") for n in data["diagnosis"]["nearest"])
        text = cli(command, "-C", str(project), PARTIAL).output
        assert "nearest candidates rejected: retrier 2.0.0 " in text


def test_each_typed_part_is_judged_on_its_own(project):
    typed = "lex: retry attempts waiting\nhyde: train a large network on a graphics card"
    data = reply("query", "-C", str(project), typed, "--explain")
    assert not data["refused"] and data["results"][0]["title"] == "Retry#retry_on"
    hyde_alone = reply("query", "-C", str(project), "hyde: train a large network on a graphics card")
    assert hyde_alone["refused"]  # the part that the lex: part outweighs is refused on its own
    absent = reply("query", "-C", str(project), "lex: kafka offsets\nvec: train a neural network on gpu tensors")
    assert absent["refused"] and [p["part"] for p in absent["diagnosis"]["parts"]] == ["lex", "vec"]


def test_a_technical_term_the_bundle_never_mentions_outweighs_a_rephrasing_in_common_words(project):
    """An agent's `vec:` rephrasing finds its everyday words somewhere; the subject it rephrases
    decides, unless a part names an API the bundle documents."""
    rephrased = "how do I publish each failed attempt to kafka\nvec: retry a job after it failed"
    assert not reply("query", "-C", str(project), "vec: retry a job after it failed")["refused"]
    data = reply("query", "-C", str(project), rephrased)
    assert data["refused"] and data["diagnosis"]["absent"] == ["kafka"]
    assert "never mentioned: kafka" in cli("query", "-C", str(project), rephrased).output
    named = reply("query", "-C", str(project), rephrased + "\nlex: Retry#retry_on")
    assert not named["refused"] and named["results"][0]["title"] == "Retry#retry_on"


def test_a_missing_subject_two_parts_say_in_words_outweighs_a_named_api(project, monkeypatch):
    """Named APIs beside a subject the bundle never mentions are its setting: when the question and the
    agent's rephrasing both say "kafka", the query is refused, even when the ``lex:`` part also guesses
    a name with it (``Kafka::Producer``). A missing word every part writes as code
    (``Kafka::DeliveryFailed``) is a wrong guess at a name, and the named API stands."""
    insisted = "how do I publish each failed attempt to kafka\nlex: Retry#retry_on\nvec: publish failed jobs to kafka"
    data = reply("query", "-C", str(project), insisted)
    assert data["refused"] and data["diagnosis"]["absent"] == ["kafka"]
    as_code = ("my job raises Kafka::DeliveryFailed when it retries\nlex: Retry#retry_on Kafka::DeliveryFailed\n"
               "vec: retry a job after Kafka::DeliveryFailed")  # fmt: skip
    data = reply("query", "-C", str(project), as_code)
    assert not data["refused"] and data["results"][0]["title"] == "Retry#retry_on"
    guessed_too = insisted.replace("lex: Retry#retry_on", "lex: Retry#retry_on Kafka::Producer")
    data = reply("query", "-C", str(project), guessed_too)
    assert data["refused"] and data["diagnosis"]["absent"] == ["kafka"]
    once_in_words = "how do I publish each failed attempt to kafka\nlex: Retry#retry_on\nvec: Kafka::Producer#produce"
    assert not reply("query", "-C", str(project), once_in_words)["refused"]  # the vec: part writes it as code only
    from gemdoc import ask

    bundle = ask.open_bundle(project)
    assert ask.semantic(bundle, insisted, ask.Options(), None, None, False).refused
    monkeypatch.setattr(evidence, "INSISTED_SUBJECT_RULE", False)
    assert not ask.semantic(bundle, insisted, ask.Options(), None, None, False).refused


def test_a_camelcase_name_said_in_words_is_a_subject_not_a_guess(project, monkeypatch):
    """``gRPC`` or ``GraphQL`` alone in a sentence is a product named in words, as "kafka" is: said by
    the question and the rephrasing, it outweighs the named API. Written in a ``lex:`` part, or with
    ``::``, ``#``, ``.`` or ``_``, it stays a guess at a name."""
    from gemdoc import ask, terms

    monkeypatch.setattr(evidence, "COINED_SUBJECT_RULE", False)  # the insisted rule alone refuses it
    said = "how do I retry each failed gRPC call\nlex: Retry#retry_on\nvec: retry failed gRPC calls"
    data = reply("query", "-C", str(project), said)
    assert data["refused"] and data["diagnosis"]["absent"] == ["grpc"]
    guessed = "how do I retry each failed call\nlex: Retry#retry_on GRPC::BadStatus\nvec: retry failed calls"
    assert not reply("query", "-C", str(project), guessed)["refused"]
    assert terms.code_terms("retry gRPC, then (GraphQL) or “gRPC’s” GraphQL…") == set()
    assert terms.code_terms("AnyCable gRPC", prose=False) == {"anycable", "grpc"}
    assert terms.code_terms("GRPC::BadStatus after_commit job.perform_now #perform") == {
        "grpc", "badstatus", "after", "commit", "job", "perform", "now"}
    monkeypatch.setattr(terms, "NAMES_ARE_WORDS", False)
    bundle = ask.open_bundle(project)
    assert not ask.semantic(bundle, said, ask.Options(), None, None, False).refused


def test_a_coined_subject_in_the_asking_sentence_outweighs_a_documented_method(project, monkeypatch):
    """Beside ``Retry#retry_on``, a rare English word the docs lack ("sniffing") may be the user's own
    wording, but a term no word list holds, written as a technology is named ("gRPC"), names one the
    bundle never mentions."""
    from gemdoc import ask

    coined = "Our calls fail now and then. How do I retry each failed gRPC call with Retry#retry_on?"
    worded = "Our calls fail now and then. How do I retry each failed sniffing call with Retry#retry_on?"
    assert evidence.zipf("grpc") == 0 and 0 < evidence.zipf("sniffing") < evidence.BARS.rare_zipf
    data = reply("search", "-C", str(project), coined)
    assert data["refused"] and data["diagnosis"]["absent"] == ["grpc"]
    assert not reply("search", "-C", str(project), worded)["refused"]
    for unlike in ("grpc", "GrpcClient", "retyr"):  # lower case (jargon, a typo), or a compound: the user's class
        assert not reply("search", "-C", str(project), coined.replace("gRPC", unlike))["refused"], unlike
    monkeypatch.setattr(evidence, "COINED_SUBJECT_RULE", False)
    bundle = ask.open_bundle(project)
    assert not ask.keyword(bundle, coined, ask.Options()).refused


def test_a_name_capitalised_in_the_asking_sentence_outweighs_a_documented_method(project, monkeypatch):
    """A rare word the docs lack, capitalised inside the sentence that asks ("the Herb engine"), is a
    name: a technology the bundle never mentions, as a coined term is. In lower case, at a sentence's
    start, opening a quote, or said only where the question sets the scene, it may be the user's wording."""
    from gemdoc import ask

    assert terms.proper_names('Our app uses Herb. How do I switch to Cuprite, or "Ferrum" (Selenium), with the QA '
                              "team and gRPC in ActiveAccounting? I think") == {"cuprite"}  # the asking sentence's
    for unnamed in ("How Do I Configure Retry#retry_on For Idempotent Jobs?", "Quick one: Idempotent jobs, how?",
                    "hi\nIdempotent jobs: how?", "(Sorry if dumb.) Idempotent jobs: how?", "Idempotent jobs - Herb?"):
        assert terms.proper_names(unnamed) == set(), unnamed
    named = "Our calls fail now and then. How do I retry each call the Herb engine makes with Retry#retry_on?"
    assert 0 < evidence.zipf("herb") <= evidence.BARS.rare_zipf
    data = reply("search", "-C", str(project), named)
    assert data["refused"] and data["diagnosis"]["reason"] == "absent_subject"
    assert data["diagnosis"]["absent"] == ["herb"]
    typed = reply("query", "-C", str(project), f"{named}\nlex: Retry#retry_on\nvec: retry a job when it fails")
    assert typed["refused"] and typed["diagnosis"]["absent"] == ["herb"]
    asking = "How do I retry each call the Herb engine makes with"
    kept = (
        named.replace("Herb", "herb"),  # lower case
        named.replace("How do I retry each call the Herb engine makes", "Herb calls: how do I retry each one"),  # first
        named.replace("Herb engine", '"Herb" engine'),  # opening a quote
        f"We compile with Herb. {named.replace('Herb', 'herb')}",  # only where the question sets the scene
        "lex: Retry#retry_on Herb",  # a typed part capitalises class names
        named.replace(asking, "How Do I Retry Each Call The Herb Engine Makes With"),  # Title Case
    )
    for text in kept:
        assert not reply("search", "-C", str(project), text)["refused"], text
    monkeypatch.setattr(evidence, "PROPER_NAMES_RULE", False)
    assert not ask.keyword(ask.open_bundle(project), named, ask.Options()).refused


def test_an_api_the_bundle_documents_named_anywhere_is_evidence(project):
    scene = "We train neural networks on gpu tensors overnight."
    named = reply("search", "-C", str(project), f"{scene} Does Retry#discard_on stop that work?")
    assert not named["refused"] and named["diagnosis"] is None
    assert "Retry#discard_on" in [r["title"] for r in named["results"]]
    unknown = reply("search", "-C", str(project), f"{scene} Does Kafka::Consumer#seek stop that work?")
    assert unknown["refused"] and unknown["diagnosis"]["named"] == []


def test_an_absent_subject_in_the_sentence_that_asks_refuses_a_question(project, monkeypatch):
    """Said where the question sets the scene, a term the bundle never mentions is context ("we
    deploy through ngrok"), and so is one said in quotes, an example or a message; said in the
    sentence that asks, it is the subject, unless the question names a documented method by its full
    name, one specific entry, and the term is not coined (``gRPC``: see the coined test)."""
    scene = "Our jobs run on machines we reach through ngrok. How do I retry a job when an error is raised?"
    asked = "Our jobs run on several machines. How do I retry a job through ngrok when an error is raised?"
    one_sentence = "retry a job through ngrok when an error is raised"
    quoted = ["Our jobs run on several machines. How do I retry a job when it raises 'ngrok tunnel closed'?",
              'retry a job when an error like “ngrok tunnel closed” is raised']
    still_asked = ['How do I retry a job through "ngrok" when an error is raised?',  # a quoted name
                   '"How do I retry a job through ngrok when an error is raised?"',  # the question quoted whole
                   "How do I retry the users' jobs through ngrok when they don't finish and 'fail'?"]  # apostrophes
    for command in ("search", "query"):
        for text in (scene, *quoted):
            kept = reply(command, "-C", str(project), text)
            assert not kept["refused"] and kept["results"][0]["title"].startswith("Retry#"), text
        for text in (asked, one_sentence, *still_asked):
            data = reply(command, "-C", str(project), text)
            assert data["refused"] and data["diagnosis"]["absent"] == ["ngrok"]  # coverage, or the asked subject
            assert data["diagnosis"]["reason"] in ("absent_subject", "too_little_of_the_query_matched")
        named = asked.replace("retry a job", "use Retry#retry_on")
        kept = reply(command, "-C", str(project), named)
        assert not kept["refused"] and kept["results"][0]["title"] == "Retry#retry_on"
        assert reply(command, "-C", str(project), named.replace("ngrok", "gRPC"))["refused"]  # coined
    monkeypatch.setattr(evidence, "ASKED_SUBJECT_RULE", False)
    from gemdoc import ask

    assert not ask.keyword(ask.open_bundle(project), asked, ask.Options()).refused


def test_the_question_as_typed_says_its_subject_in_a_typed_query_too(project, monkeypatch):
    """In a query of several parts, the untyped part is the user's question: an absent subject in its
    sentence that asks refuses the query even beside a documented method named bare (``retry_on``),
    but not beside one named by its full name, one specific entry, unless the term is coined (``gRPC``)."""
    asked = "Our jobs run on several machines. How do I retry a job through ngrok when it fails?"
    typed = f"{asked}\nlex: retry_on\nvec: retry the job when the given error is raised"
    data = reply("query", "-C", str(project), typed)
    assert data["refused"] and data["diagnosis"]["reason"] == "absent_subject"
    assert data["diagnosis"]["absent"] == ["ngrok"] and data["diagnosis"]["named"] == ["retry_on"]
    assert data["diagnosis"]["coverage"] >= data["diagnosis"]["min_coverage"]  # its words matched: ngrok refused it
    assert data["diagnosis"]["hint"].startswith("The query asks about ngrok, which no documentation in this bundle")
    assert "The query asks about ngrok" in cli("query", "-C", str(project), typed).output
    little = reply("query", "-C", str(project), "deploy the graphql kafka cluster onto kubernetes with terraform")
    assert little["refused"] and little["diagnosis"]["reason"] == "too_little_of_the_query_matched"
    assert little["diagnosis"]["coverage"] < little["diagnosis"]["min_coverage"]
    assert little["diagnosis"]["hint"].startswith("Most of the question's distinctive words")
    named = typed.replace("lex: retry_on", "lex: Retry#retry_on")
    kept = reply("query", "-C", str(project), named)
    assert not kept["refused"] and kept["results"][0]["title"] == "Retry#retry_on"
    assert reply("query", "-C", str(project), named.replace("ngrok", "gRPC"))["refused"]  # coined
    monkeypatch.setattr(evidence, "ASKED_SUBJECT_RULE", False)
    assert not reply("query", "-C", str(project), typed)["refused"]


def test_ordinary_words_weigh_less_than_technical_ones():
    assert evidence.zipf("tomorrow") > 4.5 > evidence.zipf("kafka") > evidence.zipf("graphql") == 0.0
    bars = evidence.Bars(0.8, 0.5, 1.01, common_zipf=5.0, rare_zipf=3.0)
    assert evidence.weight("tomorrow", bars) == 0.0 and evidence.weight("graphql", bars) == 1.0
    assert 0.0 < evidence.weight("flaky", bars) <= 1.0


def test_a_missing_ordinary_word_does_not_refuse_but_a_missing_technical_one_does(project):
    ordinary = reply("search", "-C", str(project), "retry the job tomorrow when the error is raised")
    assert not ordinary["refused"] and ordinary["results"][0]["title"].startswith("Retry#")
    technical = reply("search", "-C", str(project), "retry the graphql job when the error is raised")
    assert technical["refused"] and technical["diagnosis"]["reason"] == "absent_subject"


def test_a_part_naming_one_documented_class_exactly_keeps_the_absent_term_rule_away():
    """``lex: Nokogiri`` names a documented class exactly (the part's own ``exact``), which counts
    as a named API does: an absent word elsewhere (``libxml2``) does not refuse the query."""
    def parts(exact: bool) -> list:
        lex = evidence.Evidence(["nokogiri"], ["nokogiri"], [], {"nokogiri": 5.0}, 5.0, exact=exact, any_in_bundle=True)
        vec = evidence.Evidence(["parse", "libxml2"], ["parse"], [], {"parse": 2.0, "libxml2": 9.0}, 2.0,
                                any_in_bundle=True)  # fmt: skip
        return [("lex", lex), ("vec", vec)]

    assert not evidence.judge(parts(exact=True), [], None).refused
    refused = evidence.judge(parts(exact=False), [], None)
    assert refused.refused and refused.absent == ["libxml2"]


def test_a_rephrasing_no_passage_comes_near_refuses_whatever_the_words_matched(project, monkeypatch):
    """An agent's ``vec:`` part says what the docs would say if they covered the question: when no chunk
    comes within REPHRASING_FLOOR of it, the query is refused although the question's own words occur."""
    question = "how do I retry a job when an error is raised"
    far = f"{question}\nvec: cook food at home for dinner"  # common words: no absent technical term
    data = reply("query", "-C", str(project), far)
    assert data["refused"] and data["diagnosis"]["reason"] == "nothing_near_the_rephrasing"
    assert data["diagnosis"]["rephrasing"] < data["diagnosis"]["min_rephrasing"] == evidence.REPHRASING_FLOOR
    near = reply("query", "-C", str(project), f"{question}\nvec: retry the job when the given error is raised")
    assert not near["refused"] and near["results"][0]["title"] == "Retry#retry_on"
    from gemdoc import ask
    from gemdoc import cli as commands

    bundle = ask.open_bundle(project)
    embedder, matrix, _ = commands._vector_arm(bundle, required=True)
    ungated = ask.Options(refuse=False)
    assert ask.semantic(bundle, far, ungated, embedder, matrix, False).evidence.rephrasing is not None
    assert ask.semantic(bundle, question, ungated, embedder, matrix, True).evidence.rephrasing is None  # vsearch
    text = cli("query", "-C", str(project), far).output  # the text says what refused, to three places:
    floor = re.escape(f"(floor {evidence.REPHRASING_FLOOR})")
    assert re.search(rf"vec: nearest cosine -?0\.\d{{3}} {floor}", text)  # 0.548 is not "0.55 (floor 0.55)"
    assert "part text, its words alone: enough" in text  # the question's words passed; the cosine refused
    conn = sqlite3.connect(paths.store_path())
    conn.execute("DELETE FROM vectors WHERE digest IN (SELECT digest FROM chunks WHERE title = 'Filler#m1')")
    conn.commit()
    conn.close()
    assert not reply("query", "-C", str(project), far)["refused"]  # a chunk not embedded yet may be the near one
    embed.embed_project(project)
    assert reply("query", "-C", str(project), far)["refused"]
    monkeypatch.setattr(evidence, "REPHRASING_FLOOR", -1.0)
    assert not reply("query", "-C", str(project), far)["refused"]


def test_a_method_named_by_its_full_name_stands_against_the_rephrasing_floor(project, monkeypatch):
    """A documented method named by its full name is one specific API entry: a loose ``vec:`` part far
    from every chunk does not overrule it (real CLI, store and model). With the rule off it does."""
    far = "how do I retry a job when an error is raised\nlex: Retry#retry_on\nvec: cook food at home for dinner"
    data = reply("query", "-C", str(project), far)
    assert not data["refused"] and data["results"][0]["title"] == "Retry#retry_on"
    assert data["diagnosis"] is None
    monkeypatch.setattr(evidence, "SPECIFIC_API_RULE", False)
    assert reply("query", "-C", str(project), far)["diagnosis"]["reason"] == "nothing_near_the_rephrasing"


def test_only_a_method_or_a_cop_by_full_name_spares_the_floor(monkeypatch):
    """A class or module named (``Faraday::Middleware``) is often the setting of an absent question,
    not its answer: the floor still refuses; a method by full name, either kind, or a cop does not."""
    def judged(named: list[str]) -> evidence.Evidence:
        part = evidence.Evidence(["retry"], ["retry"], [], {"retry": 5.0}, 5.0, any_in_bundle=True)
        return evidence.judge([("lex", part), ("vec", part)], named, None, rephrasing=0.2)

    for specific in ("RSpec::Matchers#change", "Rack::Utils.escape", "Pundit::policy_scope", "Style/StringLiterals"):
        assert not judged([specific]).refused, specific
    for area in ("Faraday::Middleware", "Nokogiri", "have_text"):
        assert judged([area]).reason == "nothing_near_the_rephrasing", area
    monkeypatch.setattr(evidence, "SPECIFIC_API_RULE", False)
    assert judged(["RSpec::Matchers#change"]).reason == "nothing_near_the_rephrasing"


def test_lex_names_none_of_which_the_bundle_documents_refuse_unless_a_passage_comes_near():
    """An agent's ``lex:`` guesses name the API it expects the answer in: when the bundle documents none
    of them, only a chunk within GUESSED_NAMES_NEAR of a part, or a method named by its full name that
    the bundle documents, keeps the question."""
    def judged(cosine: float | None, named: tuple = (), guessed: tuple = ("Sidekiq::Batch#on",)) -> evidence.Evidence:
        part = evidence.Evidence(["batch", "jobs"], ["batch", "jobs"], [], {"batch": 5.0, "jobs": 3.0}, 8.0,
                                 any_in_bundle=True)  # fmt: skip
        return evidence.judge([("lex", part), ("vec", part)], list(named), cosine, guessed=guessed)

    refused = judged(None)
    assert refused.reason == "named_apis_not_in_bundle" and refused.guessed == ["Sidekiq::Batch#on"]
    assert judged(evidence.GUESSED_NAMES_NEAR - 0.05).reason == "named_apis_not_in_bundle"
    assert not judged(evidence.GUESSED_NAMES_NEAR).refused
    assert not judged(None, guessed=()).refused
    assert not judged(None, named=("Sidekiq::Client#push",)).refused  # one documented method by its full name
    assert judged(None, named=("Sidekiq",)).reason == "named_apis_not_in_bundle"  # a module is only the setting
    assert "min_guessed_near" in refused.diagnosis() and refused.diagnosis()["hint"]


def test_a_missing_api_the_question_asks_for_refuses_whatever_the_names_beside_it():
    """``asked_missing`` (the first ``lex:`` name, which the question asks for by name, is missing)
    refuses as ``guessed`` does, but a documented method named beside it is the agent's way around the
    API asked for, no evidence the bundle has it; a near passage still spares the question."""
    def judged(cosine: float | None, named: tuple = ("ActiveJob::Enqueuing::ClassMethods#perform_later",),
               asked: tuple = ("ActiveJob::perform_all_later",)) -> evidence.Evidence:
        part = evidence.Evidence(["enqueue", "jobs"], ["enqueue", "jobs"], [], {"enqueue": 5.0, "jobs": 3.0}, 8.0,
                                 any_in_bundle=True)  # fmt: skip
        return evidence.judge([("lex", part), ("vec", part)], list(named), cosine, asked_missing=asked)

    refused = judged(None)
    assert refused.reason == "named_apis_not_in_bundle" and refused.guessed == ["ActiveJob::perform_all_later"]
    assert not judged(evidence.GUESSED_NAMES_NEAR).refused
    assert not judged(None, asked=()).refused


def test_wrong_lex_guesses_refuse_through_the_cli_only_with_vectors_and_no_near_passage(project, monkeypatch):
    """Real CLI, store and model: every ``lex:`` name unknown to the bundle refuses when no chunk comes
    near; one documented name (bare ``retry_on``, not a full name that would spare the question by
    itself), one RDoc files elsewhere (``Retry.retry_on`` is ``Retry#retry_on``), or one the docs
    write (``between_tries``) keeps it; without vectors nothing could spare a wrong guess."""
    question = "how do I retry a job when an error is raised"
    wrong = f"{question}\nlex: Retry#retry_later Retry::Attempts\nvec: retry the job when the given error is raised"
    assert not reply("query", "-C", str(project), wrong)["refused"]  # the passage is near: a wrong guess only
    monkeypatch.setattr(evidence, "GUESSED_NAMES_NEAR", 0.99)  # no passage near enough
    data = reply("query", "-C", str(project), wrong)
    assert data["refused"] and data["diagnosis"]["reason"] == "named_apis_not_in_bundle"
    assert data["diagnosis"]["guessed"] == ["Retry#retry_later", "Retry::Attempts"]
    text = cli("query", "-C", str(project), wrong).output
    assert "lex: names not in these versions: Retry#retry_later, Retry::Attempts" in text and "(bar 0.99)" in text
    for kept in ("Retry#retry_later retry_on", "Retry.retry_on", "Retry#retry_later between_tries"):
        named = wrong.replace("Retry#retry_later Retry::Attempts", kept)
        assert not reply("query", "-C", str(project), named)["refused"], kept
    monkeypatch.setattr(evidence, "GUESSED_NAMES_RULE", False)
    assert not reply("query", "-C", str(project), wrong)["refused"]
    monkeypatch.setattr(evidence, "GUESSED_NAMES_RULE", True)
    conn = sqlite3.connect(paths.store_path())
    conn.execute("DELETE FROM vectors")
    conn.commit()
    conn.close()
    keyword_only = reply("query", "-C", str(project), wrong)
    assert keyword_only["mode"] == "keyword" and not keyword_only["refused"]


def test_a_missing_api_the_question_asks_for_by_name_refuses_through_the_cli(project, monkeypatch):
    """Real CLI, store and model: the user asks for ``retry_async_later`` by name and the agent lists it
    first in ``lex:``, beside the documented ``Retry#retry_on``; these versions lack it, so the question
    is refused unless a passage comes near; so is a name whose words the docs write only in a row. Not
    when the agent guessed the name on its own (the question does not write it), nor when the missing
    name is not the first."""
    typed = ("how do I use retry_async_later to retry a job when an error is raised\n"
             "lex: Retry#retry_async_later Retry#retry_on\nvec: retry the job when the given error is raised")
    assert not reply("query", "-C", str(project), typed)["refused"]  # a passage is near
    monkeypatch.setattr(evidence, "GUESSED_NAMES_NEAR", 0.99)  # no passage near enough
    data = reply("query", "-C", str(project), typed)
    assert data["refused"] and data["diagnosis"]["reason"] == "named_apis_not_in_bundle", data
    assert data["diagnosis"]["guessed"] == ["Retry#retry_async_later"]
    words_in_a_row = typed.replace("retry_async_later", "Job::Class").replace("Retry#Job::Class", "Job::Class")
    data = reply("query", "-C", str(project), words_in_a_row)  # the README's "a job class" is no Job::Class
    assert data["refused"] and data["diagnosis"]["guessed"] == ["Job::Class"], data
    data = reply("query", "-C", str(project), words_in_a_row.replace("Retry#retry_on", "Retry#nope_later"))
    assert data["diagnosis"]["guessed"] == ["Job::Class", "Retry#nope_later"], data  # neither is there as written
    alone = typed.replace("use retry_async_later", "use retry_async_later, or Retry#retry_on,")
    for refused in (alone, alone.replace(" Retry#retry_on\nvec", "\nvec")):  # a method the question names spares
        assert reply("query", "-C", str(project), refused)["refused"], refused  # neither, in lex: or not
    for kept in (typed.replace("use retry_async_later to ", ""),  # the agent's own guess
                 words_in_a_row.replace("use Job::Class to ", "").replace("Retry#retry_on", "Retry#nope_later"),
                 # a name the agent made up itself may be words in a row of the docs
                 typed.replace("Retry#retry_async_later Retry#retry_on", "Retry#retry_on Retry#retry_async_later"),
                 typed.replace("Retry#retry_async_later", "Retry#raised"),  # said in English: "is raised"
                 typed.replace("retry_async_later", "retry_on").replace("Retry#retry_on Retry", "Job#retry_on Retry")):
        # the last: the method asked for, documented under another owner than the first name's
        assert not reply("query", "-C", str(project), kept)["refused"], kept
    monkeypatch.setattr(evidence, "ASKED_NAMES_RULE", False)
    assert not reply("query", "-C", str(project), typed)["refused"]


def test_the_writer_of_a_documented_attribute_asked_for_is_no_missing_api(tmp_path, monkeypatch):
    """RDoc files an accessor under its reader (``Retry#max_attempts``); an agent names the writer it
    would call (``Retry#max_attempts=``) for a question that writes ``max_attempts`` as code. A reader
    alone or a method has no writer, and an operator names only itself (``==`` is not ``===``)."""
    def entry(title: str, signature: str, kind: str = "attribute") -> Chunk:
        return Chunk("ri", title, title, "How many times a job is tried.", "lib/retry.rb", 2, signature, kind,
                     title.split("#")[-1])  # fmt: skip

    extra = (entry("Retry#max_attempts", "attr_accessor :max_attempts"), entry("Retry#max_tries", "attr_reader :max_tries"),
             entry("Retry#===", "===(other)", "method"))  # fmt: skip
    project = test_agent.make_project(tmp_path, monkeypatch, extra)
    monkeypatch.setattr(evidence, "GUESSED_NAMES_NEAR", 0.99)  # no passage near enough to spare a wrong guess
    typed = "how do I set max_attempts to 3 for a job\nlex: {}\nvec: the number of attempts before a job fails"
    for names in ("Retry#max_attempts= Retry#retry_on", "Retry#max_attempts="):
        data = reply("query", "-C", str(project), typed.format(names))
        assert not data["refused"] and data["notes"] == [], names
    data = reply("query", "-C", str(project), typed.replace("max_attempts", "max_tries").format("Retry#max_tries="))
    assert data["diagnosis"]["reason"] == "named_apis_not_in_bundle", data  # no writer of that attribute
    assert data["diagnosis"]["guessed"] == ["Retry#max_tries="]
    assert "no API named Retry#==" in " ".join(reply("search", "-C", str(project), "Retry#==")["notes"])


def test_a_name_is_asked_for_only_where_the_question_writes_it_as_code():
    """asked_by_name: the question's untyped part writes the name's last part inside a word written as an
    API name, in its case; a name said in English, an operator, or one only ``lex:`` writes is not."""
    from gemdoc import ask

    def asked(name: str, question: str) -> bool:
        return ask.asked_by_name(name, [(None, question), ("lex", name)])

    assert asked("ActiveJob::perform_all_later", "How do I use perform_all_later in our Rails version?")
    assert asked("ActiveRecord::QueryMethods::WhereChain#associated", "Post.where.associated(:author) raises")
    assert asked("RSpec/MultipleExpectations", "the linter's RSpec/MultipleExpectations cop flags it")
    assert asked("Retry#retry_pending?", "is retry_pending? true after a failure")
    assert asked("ActiveJob::perform_all_later", "perform_all_laterの使い方")  # code ends where ASCII does
    for name, question in (("Nokogiri::HTML5::Builder", "Is there a builder for HTML5 documents?"),
                           ("Retry::Error", "how do I retry when an Error is raised"),
                           ("Queue#enqueue", "how do I enqueue a job"), ("Foo#[]", "x = [] and foo_bar")):
        assert not asked(name, question), name
    assert not ask.asked_by_name("Queue#perform_all_later", [(None, "enqueue many"), ("lex", "perform_all_later")])


def test_the_version_constant_of_a_documented_namespace_is_no_wrong_guess(tmp_path, monkeypatch):
    """An agent asking what changed in a release names the gem's ``VERSION`` constant in ``lex:``; RDoc
    files constants inside their namespace's entry, so no entry bears it, yet it is no guess at an API
    the locked version lacks when the bundle documents the namespace."""
    from gemdoc import ask

    module = Chunk("ri", "Retry", "Retry", "Retries jobs that raise.", "lib/retry.rb", 1, "module Retry", "module",
                   "retry")  # fmt: skip
    project = test_agent.make_project(tmp_path, monkeypatch, (module,))
    monkeypatch.setattr(evidence, "GUESSED_NAMES_NEAR", 0.99)  # no passage near enough to spare a wrong guess
    asked = "what changed in the latest retry release\nlex: {}\nvec: retry the job when the given error is raised"
    kept = reply("query", "-C", str(project), asked.format("Retry::VERSION"))
    assert not kept["refused"] and kept["notes"] == [], kept  # nor a note that no API bears the name
    for guess in ("Retry::Attempts::VERSION", "Retry::RELEASE",  # a namespace the bundle lacks; another constant
                  "Retry::VERSION Retry#retry_async_later"):  # no evidence for a wrong guess beside it
        data = reply("query", "-C", str(project), asked.format(guess))
        assert data["diagnosis"]["reason"] == "named_apis_not_in_bundle", guess
    monkeypatch.setattr(ask, "version_constant", lambda *args: False)
    assert reply("query", "-C", str(project), asked.format("Retry::VERSION"))["refused"]


def test_a_one_sentence_question_no_passage_comes_near_is_refused(project, monkeypatch):
    """Real CLI, store and model: a question of one sentence asked alone has no scene to dilute its
    vector, so no chunk within QUESTION_FLOOR refuses it; a question that sets a scene first, an
    agent's typed query, and a question naming a documented method by its full name are not held to it."""
    alone = "how do I retry a job when an error is raised"
    assert not reply("query", "-C", str(project), alone)["refused"]
    monkeypatch.setattr(evidence, "QUESTION_FLOOR", 0.99)  # no passage near enough
    data = reply("query", "-C", str(project), alone)
    assert data["refused"] and data["diagnosis"]["reason"] == "nothing_near_the_question"
    assert data["diagnosis"]["question"] < data["diagnosis"]["min_question"] == 0.99
    assert "question: nearest cosine" in cli("query", "-C", str(project), alone).output
    kept = (f"Our jobs call a flaky service. {alone.capitalize()}?",
            f"{alone}\nvec: retry the job when an error is raised", f"{alone} with Retry#retry_on")
    for text in kept:
        assert not reply("query", "-C", str(project), text)["refused"], text
    assert not reply("search", "-C", str(project), alone)["refused"]  # keyword only: no vector to hold it to
    monkeypatch.setattr(evidence, "QUESTION_FLOOR", -1.0)
    assert not reply("query", "-C", str(project), alone)["refused"]


def test_the_users_own_class_names_weigh_as_ordinary_words(tmp_path, monkeypatch):
    """A CamelCase name no doc holds whose last word ends a class the bundle documents (``ReportJob``
    beside ``Retrier::Job``) is the user's own code, as Rails names an app's classes: said in the
    sentence that asks, it does not refuse the question. One that ends like nothing documented
    (``PaperTrail``) still does; so does ``ReportJob`` in a bundle without such a class."""
    job = Chunk("ri", "Retrier::Job", "Retrier::Job", "A unit of work a worker runs.", "lib/retry.rb", 1, "", "class",
                "job")  # fmt: skip
    app = test_agent.make_project(tmp_path, monkeypatch, (job,))
    asked = "Our jobs run on several machines. How do I retry my ReportJob when an error is raised?"
    for command in ("search", "query"):
        data = reply(command, "-C", str(app), asked)
        assert not data["refused"] and data["results"][0]["title"].startswith("Retry#"), command
        absent = reply(command, "-C", str(app), asked.replace("ReportJob", "PaperTrail"))
        assert absent["refused"] and absent["diagnosis"]["absent"] == ["papertrail"], command
    other = Writer(paths.store_path())  # another project's gem in the shared store: not this bundle's docs
    other.replace_gem(GemRecord("other", "1.0.0", str(tmp_path), "gem", "d2", "complete"),
                      [Chunk("readme", "Other", "Other", "class ReportJob runs reports.", "README.md", 1)])  # fmt: skip
    other.close()
    assert not reply("query", "-C", str(app), asked)["refused"]
    monkeypatch.setattr(evidence, "OWN_NAMES_RULE", False)
    assert reply("query", "-C", str(app), asked)["diagnosis"]["absent"] == ["reportjob"]


def test_a_documented_predicate_named_in_lex_is_no_wrong_guess(tmp_path, monkeypatch):
    pending = Chunk("ri", "Retry#retry_pending?", "Retry#retry_pending?", "Whether a retry is scheduled.",
                    "lib/retry.rb", 2, "", "method", "retry_pending?")  # fmt: skip
    app = test_agent.make_project(tmp_path, monkeypatch, (pending,))
    monkeypatch.setattr(evidence, "GUESSED_NAMES_NEAR", 0.99)  # only a documented name keeps the question
    typed = "is a retry scheduled for this job\nlex: Retry#retry_pending?\nvec: whether a retry is scheduled"
    assert not reply("query", "-C", str(app), typed)["refused"]
    assert reply("query", "-C", str(app), typed.replace("retry_pending?", "retry_waiting?"))["refused"]
    from gemdoc import ask

    bundle = ask.open_bundle(app)
    assert ask.named_apis(bundle, "is Retry#retry_pending? true") == ["Retry#retry_pending?"]  # the ``?`` is its name's
    assert ask.named_apis(bundle, "what does Retry#retry_on?") == ["Retry#retry_on?"]  # ...or a sentence's end


def test_a_class_name_is_the_users_own_only_when_a_documented_class_ends_with_its_last_word(project):
    asked = "Our jobs run on several machines. How do I retry my ReportJob when an error is raised?"
    data = reply("query", "-C", str(project), asked)  # no class or module documented at all
    assert data["refused"] and data["diagnosis"]["absent"] == ["reportjob"]


def test_a_query_naming_an_api_the_bundle_lacks_says_so(tmp_path, monkeypatch):
    """An API name alone that no entry bears (``Retry#retry_forever``) still ranks what shares its
    words, and says that none of it is the API asked about, in JSON and in text; not a name a passage
    writes, as an option is (the results hold it). Written means the name itself: a documented name it
    begins (``Retry#retry`` of ``Retry#retry_on``) or its words in prose ("the given error") are not
    it; an attribute's writer documents its name. A typed query's lex: names the bundle lacks get the
    same note, so an agent does not take a later result for them; a reply that --min-score empties
    gets none, a refused one gets it without the results' tail. One plain word is checked as a method,
    class or module name (a refusal's hint says to check a name with search)."""
    option = Chunk("readme", "Retrier > Options", "Retrier > Options", "Pass max_attempts: 3 to stop after three tries.",
                   "README.md", 3)  # fmt: skip
    writer = Chunk("ri", "Retry#max_tries=", "Retry#max_tries=", "Sets how many tries a job gets.", "lib/retry.rb", 3,
                   "", "method", "max_tries=")  # fmt: skip
    project = test_agent.make_project(tmp_path, monkeypatch, (option, writer))
    note = "these gem versions document no API named Retry#retry_forever: the results only share its words"
    for command in ("search", "query"):
        data = reply(command, "-C", str(project), "Retry#retry_forever")
        assert not data["refused"] and data["results"] and data["notes"] == [note], command
        assert note in cli(command, "-C", str(project), "Retry#retry_forever").output
        assert reply(command, "-C", str(project), "Retry#retry_forever", "--min-score", "1e9")["notes"] == []
        assert reply(command, "-C", str(project), "Retry#retry_on")["notes"] == []
        assert reply(command, "-C", str(project), "how do I retry a job")["notes"] == []
        assert reply(command, "-C", str(project), "max_attempts")["notes"] == []  # a passage writes it
        assert reply(command, "-C", str(project), "max_tries")["notes"] == []  # its writer is documented
        for unwritten in ("given_error", "Retry#retry", "Retry#on"):
            data = reply(command, "-C", str(project), unwritten)
            assert data["notes"] == [f"these gem versions document no API named {unwritten}"
                                     + ("" if data["refused"] else ": the results only share its words")], data
        word = "these gem versions document no method, class or module named tries: the results only use the word"
        assert reply(command, "-C", str(project), "tries")["notes"] == [word]  # one plain word, checked as a name
        for named in ("push", "push?"):  # Queue#push; a word ending a question
            assert reply(command, "-C", str(project), named)["notes"] == [], named
        moved = reply(command, "-C", str(project), "Retry::Jobs#retry_on")["notes"]  # under another owner
        assert moved == ["these gem versions document no API named Retry::Jobs#retry_on (documented: Retry#retry_on)"
                         ": the results only share its words"], moved
    typed = "how do I retry a job when an error is raised\nlex: Retry#retry_on Retry#retry_forever Retry#retry"
    assert reply("query", "-C", str(project), typed + "\nlex: Retry#retry_forever")["notes"] == [
        "lex: these gem versions document no API named Retry#retry_forever, Retry#retry"]  # not to be trusted, once each
    assert reply("query", "-C", str(project), typed.replace(" Retry#retry_forever Retry#retry", ""))["notes"] == []


def test_a_note_under_gem_names_that_gem_not_the_bundle():
    """Under ``--gem`` another gem of the bundle may document the name: the note says whose docs lack it."""
    from gemdoc import ask, project as proj

    entries = {("rack", "2.2.8"): (1, "complete"), ("sinatra", "3.0.5"): (2, "complete")}
    whole = ask.Bundle(None, proj.Scope([1, 2], list(entries), False, [], entries), Path("."))
    assert ask._whose(whole) == "these gem versions document"
    assert ask._whose(ask.Bundle(None, replace(whole.scope, gems=[2]), Path("."))) == "sinatra 3.0.5 documents"


def test_a_class_method_named_as_an_instance_method_is_named(tmp_path, monkeypatch):
    backoff = Chunk("ri", "Retry::backoff", "Retry::backoff", "How long to wait before the next attempt.",
                    "lib/retry.rb", 5, "", "method", "backoff")  # fmt: skip
    app = test_agent.make_project(tmp_path, monkeypatch, (backoff,))
    from gemdoc import ask

    bundle = ask.open_bundle(app)
    assert ask.named_apis(bundle, "set Retry#backoff or Retry.backoff") == ["Retry#backoff", "Retry.backoff"]
    monkeypatch.setattr(ask, "OTHER_KIND_NAMED", False)
    assert ask.named_apis(bundle, "set Retry#backoff or Retry.backoff") == ["Retry.backoff"]  # ``.`` was either


def test_a_method_named_as_the_other_kind_is_named(project, monkeypatch):
    """Agents rarely know whether RDoc filed a method as ``Owner#m`` or ``Owner::m``: either spelling,
    or ``Owner.m``, names it; another owner's does not."""
    from gemdoc import ask

    bundle = ask.open_bundle(project)
    assert ask.named_apis(bundle, "does Retry.discard_on or Retry::discard_on") == ["Retry.discard_on", "Retry::discard_on"]
    assert ask.named_apis(bundle, "what about Retry::discard_on?") == ["Retry::discard_on?"]  # a sentence's end
    assert ask.named_apis(bundle, "does Queue.discard_on") == []
    asked = "We train neural networks on gpu tensors overnight. Does Retry::discard_on stop that work?"
    assert not reply("search", "-C", str(project), asked)["refused"]
    monkeypatch.setattr(ask, "OTHER_KIND_NAMED", False)
    assert reply("search", "-C", str(project), asked)["refused"]


def test_an_absent_word_only_inside_a_guessed_lex_name_is_no_subject(project, monkeypatch):
    """``lex: Backoff::retryLater`` is the agent's guess at a name: the note says no API bears it, and
    its words (``backoff``, ``retrylater``) are not a subject the bundle lacks."""
    typed = "retry a job after it failed\nlex: Backoff::retryLater\nvec: retry a job after it failed"
    data = reply("query", "-C", str(project), typed)
    assert not data["refused"] and data["results"][0]["title"] == "Retry#retry_on"
    assert data["notes"] == ["lex: these gem versions document no API named Backoff::retryLater"]
    monkeypatch.setattr(evidence, "LEX_GUESSES_ASIDE", False)
    data = reply("query", "-C", str(project), typed)
    assert data["refused"] and data["diagnosis"]["absent"] == ["backoff", "retrylater"]


def test_an_option_the_docs_write_is_named(tmp_path, monkeypatch):
    """An option or environment variable the docs write (``RETRIER_MAX_ATTEMPTS``) is evidence as an API
    name is: the scene's missing words ("foreman", "procfile") are then context. One the docs do not
    write is not."""
    config = Chunk("readme", "Retrier > Configuration", "Retrier > Configuration",
                   "Set RETRIER_MAX_ATTEMPTS in the environment, or max_backoff in code, to bound how often "
                   "a failed job runs. See user_guide.md.", "README.md", 20, kind="section", name="configuration")  # fmt: skip
    app = test_agent.make_project(tmp_path, monkeypatch, (config,))
    typed = ("We start the app with foreman from a Procfile. Is there an environment variable that bounds "
             "retries?\nlex: RETRIER_MAX_ATTEMPTS\nvec: environment variable for the number of retry attempts")
    data = reply("query", "-C", str(app), typed)
    assert not data["refused"] and data["results"][0]["title"] == "Retrier > Configuration"
    assert reply("query", "-C", str(app), typed.replace("RETRIER_MAX_ATTEMPTS", "RETRIER_MAX_TRIES"))["refused"]
    from gemdoc import ask

    bundle = ask.open_bundle(app)
    assert ask.named_apis(bundle, "is it RETRIER_MAX_ATTEMPTS=3 or `max_backoff`?") == ["RETRIER_MAX_ATTEMPTS", "max_backoff"]
    assert ask.named_apis(bundle, "see user_guide.md or max_tries, RETRIER_TRIES") == []  # a file; not written
    monkeypatch.setattr(ask, "OPTIONS_NAMED", False)
    assert reply("query", "-C", str(app), typed)["refused"]
