#!/usr/bin/env python3
"""Stellar transactions for Coffer's signer, made and checked by Python's stellar-sdk (an independent XDR encoder and
verifier, written from the same Stellar XDR definitions).

Reads one JSON array of requests on stdin and prints one JSON array of answers:
  {"op": "envelopes"}   every kind of envelope Coffer must show: for each, the base64 XDR stellar-sdk built, the
                        network, the source's secret seed, and the summary Coffer must give (its JSON form, made here
                        from the values given to stellar-sdk, never from Coffer's output)
  {"op": "verify", "envelope": b64, "signed": b64, "public_key": "G…", "network_passphrase": "…"}
                        whether `signed` is `envelope` with exactly one more signature, valid for the network's
                        transaction hash by that key (stellar-sdk's own hash and Keypair.verify)
"""
import base64
import json
import sys
import warnings
from decimal import Decimal

from stellar_sdk import (Account, Asset, Claimant, ClaimPredicate, Keypair, LiquidityPoolAsset, MuxedAccount, Network,
                         Price, Signer, TransactionBuilder, TrustLineEntryFlag, TrustLineFlags, TransactionEnvelope, FeeBumpTransactionEnvelope)
from stellar_sdk.exceptions import BadSignatureError
from stellar_sdk.xdr import TransactionEnvelope as XdrEnvelope, EnvelopeType


# allow_trust is deprecated (still a valid operation), and transactions without time bounds are made on purpose.
warnings.simplefilter("ignore")


def key(n):
    return Keypair.from_raw_ed25519_seed(bytes([n]) * 32)


SOURCE, ALICE, BOB, ISSUER, COSIGNER = key(1), key(2), key(3), key(4), key(5)
USDC = Asset("USDC", ISSUER.public_key)
LONG = Asset("LONGASSET12", ISSUER.public_key)
POOL = LiquidityPoolAsset(Asset.native(), USDC, 30)


def amount(value):
    return format(Decimal(value).quantize(Decimal("0.0000001")), "f")


def asset_json(asset):
    if isinstance(asset, LiquidityPoolAsset):
        return {"asset_a": asset_json(asset.asset_a), "asset_b": asset_json(asset.asset_b), "fee": asset.fee}
    return "native" if asset.is_native() else f"{asset.code}:{asset.issuer}"


def op(kind, source=None, **fields):
    return {"type": kind, "source": source, **fields}


def operations(builder):
    """Appends one of every operation Coffer shows; returns the summary each must give."""
    pool_id = POOL.liquidity_pool_id
    balance_id = "00000000" + "ab" * 32
    absolute, relative = ClaimPredicate.predicate_before_absolute_time(1_800_000_000), ClaimPredicate.predicate_before_relative_time(3600)
    nested = ClaimPredicate.predicate_and(ClaimPredicate.predicate_not(absolute), ClaimPredicate.predicate_or(relative, ClaimPredicate.predicate_unconditional()))
    muxed = MuxedAccount(BOB.public_key, 420).account_muxed
    calls = [
        (lambda: builder.append_create_account_op(ALICE.public_key, "10.5"),
         op("create_account", destination=ALICE.public_key, starting_balance=amount("10.5"))),
        (lambda: builder.append_payment_op(BOB.public_key, Asset.native(), "25.5"),
         op("payment", destination=BOB.public_key, asset="native", amount=amount("25.5"))),
        (lambda: builder.append_payment_op(muxed, USDC, "0.0000001", source=ALICE.public_key),
         op("payment", source=ALICE.public_key, destination=muxed, asset=asset_json(USDC), amount=amount("0.0000001"))),
        (lambda: builder.append_path_payment_strict_receive_op(BOB.public_key, Asset.native(), "12", USDC, "10", [LONG]),
         op("path_payment_strict_receive", send_asset="native", send_max=amount(12), destination=BOB.public_key,
            dest_asset=asset_json(USDC), dest_amount=amount(10), path=[asset_json(LONG)])),
        (lambda: builder.append_path_payment_strict_send_op(BOB.public_key, USDC, "5", Asset.native(), "4.9", []),
         op("path_payment_strict_send", send_asset=asset_json(USDC), send_amount=amount(5), destination=BOB.public_key,
            dest_asset="native", dest_min=amount("4.9"), path=[])),
        (lambda: builder.append_manage_sell_offer_op(Asset.native(), USDC, "100", Price(1, 2), 0),
         op("manage_sell_offer", selling="native", buying=asset_json(USDC), amount=amount(100), price={"n": 1, "d": 2}, offer_id="0")),
        (lambda: builder.append_manage_buy_offer_op(USDC, Asset.native(), "7", Price(3, 1), 12345),
         op("manage_buy_offer", selling=asset_json(USDC), buying="native", buy_amount=amount(7), price={"n": 3, "d": 1}, offer_id="12345")),
        (lambda: builder.append_create_passive_sell_offer_op(LONG, Asset.native(), "1", Price(7, 3)),
         op("create_passive_sell_offer", selling=asset_json(LONG), buying="native", amount=amount(1), price={"n": 7, "d": 3})),
        (lambda: builder.append_set_options_op(home_domain="example.org", master_weight=1, low_threshold=1, med_threshold=2,
                                               high_threshold=3, set_flags=1, clear_flags=2, inflation_dest=ALICE.public_key,
                                               signer=Signer.ed25519_public_key(COSIGNER.public_key, 1)),
         op("set_options", inflation_dest=ALICE.public_key, clear_flags=2, set_flags=1, master_weight=1, low_threshold=1,
            med_threshold=2, high_threshold=3, home_domain="example.org", signer={"key": COSIGNER.public_key, "weight": 1})),
        (lambda: builder.append_set_options_op(),
         op("set_options", inflation_dest=None, clear_flags=None, set_flags=None, master_weight=None, low_threshold=None,
            med_threshold=None, high_threshold=None, home_domain=None, signer=None)),
        (lambda: builder.append_change_trust_op(USDC, "1000"), op("change_trust", line=asset_json(USDC), limit=amount(1000))),
        (lambda: builder.append_change_trust_op(POOL, "0"), op("change_trust", line=asset_json(POOL), limit=amount(0))),
        (lambda: builder.append_allow_trust_op(ALICE.public_key, "USDC", TrustLineEntryFlag.AUTHORIZED_FLAG),
         op("allow_trust", trustor=ALICE.public_key, asset_code="USDC", authorize=1)),
        (lambda: builder.append_account_merge_op(BOB.public_key), op("account_merge", destination=BOB.public_key)),
        (lambda: builder.append_inflation_op(), op("inflation")),
        (lambda: builder.append_manage_data_op("config", b"\x00\x01value"),
         op("manage_data", data_name="config", data_value=base64.b64encode(b"\x00\x01value").decode())),
        (lambda: builder.append_manage_data_op("gone", None), op("manage_data", data_name="gone", data_value=None)),
        (lambda: builder.append_bump_sequence_op(9_000_000_000), op("bump_sequence", bump_to="9000000000")),
        (lambda: builder.append_create_claimable_balance_op(USDC, "3", [Claimant(ALICE.public_key), Claimant(BOB.public_key, nested)]),
         op("create_claimable_balance", asset=asset_json(USDC), amount=amount(3), claimants=[
             {"destination": ALICE.public_key, "predicate": {"unconditional": True}},
             {"destination": BOB.public_key, "predicate": {"and": [{"not": {"before_absolute_time": "1800000000"}},
                                                                   {"or": [{"before_relative_time": "3600"}, {"unconditional": True}]}]}}])),
        (lambda: builder.append_claim_claimable_balance_op(balance_id), op("claim_claimable_balance", balance_id=balance_id)),
        (lambda: builder.append_begin_sponsoring_future_reserves_op(ALICE.public_key),
         op("begin_sponsoring_future_reserves", sponsored_id=ALICE.public_key)),
        (lambda: builder.append_end_sponsoring_future_reserves_op(source=ALICE.public_key),
         op("end_sponsoring_future_reserves", source=ALICE.public_key)),
        (lambda: builder.append_revoke_account_sponsorship_op(ALICE.public_key),
         op("revoke_sponsorship", ledger_key="account", account_id=ALICE.public_key)),
        (lambda: builder.append_revoke_trustline_sponsorship_op(ALICE.public_key, USDC),
         op("revoke_sponsorship", ledger_key="trustline", account_id=ALICE.public_key, asset=asset_json(USDC))),
        (lambda: builder.append_revoke_offer_sponsorship_op(ALICE.public_key, 77),
         op("revoke_sponsorship", ledger_key="offer", seller_id=ALICE.public_key, offer_id="77")),
        (lambda: builder.append_revoke_data_sponsorship_op(ALICE.public_key, "config"),
         op("revoke_sponsorship", ledger_key="data", account_id=ALICE.public_key, data_name="config")),
        (lambda: builder.append_revoke_claimable_balance_sponsorship_op(balance_id),
         op("revoke_sponsorship", ledger_key="claimable_balance", balance_id=balance_id)),
        (lambda: builder.append_revoke_liquidity_pool_sponsorship_op(pool_id),
         op("revoke_sponsorship", ledger_key="liquidity_pool", liquidity_pool_id=pool_id)),
        (lambda: builder.append_revoke_ed25519_public_key_signer_sponsorship_op(ALICE.public_key, COSIGNER.public_key),
         op("revoke_sponsorship", account_id=ALICE.public_key, signer_key=COSIGNER.public_key)),
        (lambda: builder.append_clawback_op(USDC, ALICE.public_key, "2"),
         op("clawback", asset=asset_json(USDC), **{"from": ALICE.public_key}, amount=amount(2))),
        (lambda: builder.append_clawback_claimable_balance_op(balance_id), op("clawback_claimable_balance", balance_id=balance_id)),
        (lambda: builder.append_set_trust_line_flags_op(ALICE.public_key, USDC, clear_flags=TrustLineFlags.AUTHORIZED_FLAG, set_flags=TrustLineFlags.AUTHORIZED_TO_MAINTAIN_LIABILITIES_FLAG),
         op("set_trust_line_flags", trustor=ALICE.public_key, asset=asset_json(USDC), clear_flags=1, set_flags=2)),
        (lambda: builder.append_liquidity_pool_deposit_op(pool_id, "10", "20", Price(1, 3), Price(1, 1)),
         op("liquidity_pool_deposit", liquidity_pool_id=pool_id, max_amount_a=amount(10), max_amount_b=amount(20),
            min_price={"n": 1, "d": 3}, max_price={"n": 1, "d": 1})),
        (lambda: builder.append_liquidity_pool_withdraw_op(pool_id, "5", "1", "2"),
         op("liquidity_pool_withdraw", liquidity_pool_id=pool_id, amount=amount(5), min_amount_a=amount(1), min_amount_b=amount(2))),
    ]
    for call, _ in calls:
        call()
    return [summary for _, summary in calls]


def builder(network, sequence=4_294_967_296, fee=100, source=SOURCE.public_key):
    return TransactionBuilder(Account(source, sequence), network_passphrase=network, base_fee=fee, v1=True)


def summary(network, envelope, source, sequence, fee, ops, memo, time_bounds=(0, 0), kind="v1", signatures=0, **extra):
    return {"network_passphrase": network, "envelope_type": kind, "hash": envelope.hash_hex(), "source": source,
            "sequence": str(sequence), "fee": fee, "time_bounds": {"min_time": time_bounds[0], "max_time": time_bounds[1]},
            "memo": memo, "operations": ops, "signatures": signatures, **extra}


def envelopes():
    out = []
    # Every operation, on the test network, with a text memo and time bounds.
    b = builder(Network.TESTNET_NETWORK_PASSPHRASE).add_text_memo("invoice 1042").add_time_bounds(0, 1_796_126_400)
    ops = operations(b)
    envelope = b.build()
    out.append(("every operation", Network.TESTNET_NETWORK_PASSPHRASE, envelope,
                summary(Network.TESTNET_NETWORK_PASSPHRASE, envelope, SOURCE.public_key, 4_294_967_297, 100 * len(ops), ops,
                        {"type": "text", "value": "invoice 1042"}, (0, 1_796_126_400))))
    # A payment on the public network, id memo, from a muxed source, already signed once by someone else.
    muxed_source = MuxedAccount(SOURCE.public_key, 7)
    b = TransactionBuilder(Account(muxed_source, 10), network_passphrase=Network.PUBLIC_NETWORK_PASSPHRASE, base_fee=250)
    b.add_id_memo(18446744073709551615).add_time_bounds(1_700_000_000, 0)
    b.append_payment_op(ALICE.public_key, USDC, "1234567.891")
    envelope = b.build()
    envelope.sign(COSIGNER)
    out.append(("public, muxed source, id memo, signed once", Network.PUBLIC_NETWORK_PASSPHRASE, envelope,
                summary(Network.PUBLIC_NETWORK_PASSPHRASE, envelope, muxed_source.account_muxed, 11, 250,
                        [op("payment", destination=ALICE.public_key, asset=asset_json(USDC), amount=amount("1234567.891"))],
                        {"type": "id", "value": "18446744073709551615"}, (1_700_000_000, 0), signatures=1)))
    # Preconditions v2: ledger bounds, minimum sequence and age, an extra signer; a hash memo.
    b = builder(Network.TESTNET_NETWORK_PASSPHRASE).add_hash_memo(bytes(range(32)))
    b.set_ledger_bounds(100, 200).set_min_sequence_number(5).set_min_sequence_age(60).set_min_sequence_ledger_gap(2)
    b.add_extra_signer(COSIGNER.public_key).add_time_bounds(10, 20)
    b.append_bump_sequence_op(4_294_967_300)
    envelope = b.build()
    out.append(("preconditions", Network.TESTNET_NETWORK_PASSPHRASE, envelope,
                summary(Network.TESTNET_NETWORK_PASSPHRASE, envelope, SOURCE.public_key, 4_294_967_297, 100,
                        [op("bump_sequence", bump_to="4294967300")], {"type": "hash", "value": bytes(range(32)).hex()}, (10, 20),
                        ledger_bounds={"min_ledger": 100, "max_ledger": 200}, min_sequence_number="5", min_sequence_age=60,
                        min_sequence_ledger_gap=2, extra_signers=[COSIGNER.public_key])))
    # A fee bump paid by the signer around Alice's signed payment.
    inner_builder = builder(Network.TESTNET_NETWORK_PASSPHRASE, source=ALICE.public_key, sequence=99)
    inner_builder.append_payment_op(BOB.public_key, Asset.native(), "1")
    inner = inner_builder.build()
    inner.sign(ALICE)
    envelope = TransactionBuilder.build_fee_bump_transaction(SOURCE.public_key, 400, inner, Network.TESTNET_NETWORK_PASSPHRASE)
    out.append(("fee bump", Network.TESTNET_NETWORK_PASSPHRASE, envelope,
                summary(Network.TESTNET_NETWORK_PASSPHRASE, envelope, ALICE.public_key, 100, 100,
                        [op("payment", destination=BOB.public_key, asset="native", amount=amount(1))], {"type": "none"},
                        kind="fee_bump", fee_bump={"fee_source": SOURCE.public_key, "fee": "800", "inner_signatures": 1})))
    # A v0 envelope (before protocol 13), as old wallets still make them.
    b = TransactionBuilder(Account(SOURCE.public_key, 1), network_passphrase=Network.TESTNET_NETWORK_PASSPHRASE, base_fee=100, v1=False)
    b.add_return_hash_memo(bytes([9]) * 32).add_time_bounds(0, 2_000_000_000)
    b.append_payment_op(ALICE.public_key, Asset.native(), "2")
    envelope = b.build()
    out.append(("v0", Network.TESTNET_NETWORK_PASSPHRASE, envelope,
                summary(Network.TESTNET_NETWORK_PASSPHRASE, envelope, SOURCE.public_key, 2, 100,
                        [op("payment", destination=ALICE.public_key, asset="native", amount=amount(2))],
                        {"type": "return", "value": (bytes([9]) * 32).hex()}, (0, 2_000_000_000), kind="v0")))
    # Not the signer's: Alice's payment, which the signer may co-sign only when told to.
    b = builder(Network.TESTNET_NETWORK_PASSPHRASE, source=ALICE.public_key, sequence=5)
    b.append_payment_op(BOB.public_key, Asset.native(), "3")
    envelope = b.build()
    out.append(("another account's", Network.TESTNET_NETWORK_PASSPHRASE, envelope,
                summary(Network.TESTNET_NETWORK_PASSPHRASE, envelope, ALICE.public_key, 6, 100,
                        [op("payment", destination=BOB.public_key, asset="native", amount=amount(3))], {"type": "none"})))
    return [{"name": name, "network_passphrase": network, "envelope": envelope.to_xdr(), "summary": expected,
             "signer_seed": SOURCE.secret, "signer": SOURCE.public_key} for name, network, envelope, expected in out]


def verify(request):
    network = request["network_passphrase"]
    before = XdrEnvelope.from_xdr(request["envelope"])
    after = XdrEnvelope.from_xdr(request["signed"])
    if after.type == EnvelopeType.ENVELOPE_TYPE_TX_FEE_BUMP:
        parsed = FeeBumpTransactionEnvelope.from_xdr(request["signed"], network)
    else:
        parsed = TransactionEnvelope.from_xdr(request["signed"], network)
    signatures = parsed.signatures
    keypair = Keypair.from_public_key(request["public_key"])
    try:
        keypair.verify(parsed.hash(), signatures[-1].signature)
        valid = signatures[-1].signature_hint == keypair.signature_hint()
    except BadSignatureError:
        valid = False
    # Nothing else changed: without its last signature, the signed envelope is the one given, byte for byte.
    signed_body = after.v1 or after.v0 or after.fee_bump
    signed_body.signatures = signed_body.signatures[:-1]
    return {"valid": valid, "unchanged": after.to_xdr() == before.to_xdr(), "signatures": len(signatures)}


def main():
    answers = []
    for request in json.load(sys.stdin):
        if request["op"] == "envelopes":
            answers.append(envelopes())
        elif request["op"] == "verify":
            answers.append(verify(request))
        else:
            raise SystemExit(f"unknown op {request['op']}")
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
