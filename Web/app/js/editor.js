// @ts-check
// The forms that add and edit items: cards (every field, the check digit the symbol will carry shown as it is typed),
// tokens (an otpauth URI or a bare secret), credentials and notes. Every value is checked by content.js's rules, the
// CLI's, before the device seals it; nothing is written on an error. The form is built with DOM calls only and emptied
// when it closes, so no value it held stays in the page. The card and token forms can scan their code in: the camera,
// or a photo, read by Coffer's own reader in a worker (scan.js), which starts only when asked.
import { CofferError, text } from './bytes.js';
import { digits, encode } from './barcode.js';
import { checkCard, checkCredential, checkNote, checkOTP, payloadBytes } from './content.js';
import { SYMBOLOGIES } from './format.js';
import { isMigrationURI, parseMigration, parseToken } from './otpauth.js';
import { releaseReader, ScanSession } from './scan.js';

/**
 * @typedef {import('./format.js').Card} Card
 * @typedef {import('./format.js').Token} Token
 * @typedef {import('./format.js').Credential} Credential
 * @typedef {import('./format.js').Note} Note
 * @typedef {import('./format.js').Kept} Kept
 * @typedef {import('./content.js').Writable} Writable
 * @typedef {import('./content.js').Draft<Token>} TokenDraft
 * @typedef {import('./barcode.js').EncoderExports} EncoderExports
 * @typedef {import('./otpauth.js').ParsedToken} ParsedToken
 * @typedef {import('./otpauth.js').ExportedToken} ExportedToken
 * @typedef {ReturnType<typeof parseMigration>} Migration
 * @typedef {import('./scan.js').Read} Read
 * @typedef {(symbology: string, payload: Uint8Array, charset: string) => void} Drawable throws when the encoder refuses
 * @typedef {[label: string, run: () => unknown, id: string]} Action a button of the form: what it runs, its element id
 */

const DAY = 86_400_000;

/**
 * An element with `attributes` (true: present, false or null: absent) and text `content`.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Record<string, unknown>} [attributes]
 * @param {string} [content]
 */
function element(tag, attributes = {}, content) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) node.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  if (content !== undefined) node.textContent = content;
  return node;
}

/**
 * `input` in a label, with `hint` under it, at the end of `form`; returns `input`.
 * @template {HTMLElement} Input
 * @param {HTMLFormElement} form
 * @param {string} label
 * @param {Input} input
 * @param {HTMLElement} [hint]
 */
function field(form, label, input, hint) {
  const wrapper = element('label', {}, label);
  wrapper.append(input);
  if (hint) wrapper.append(hint);
  form.append(wrapper);
  return input;
}

/**
 * @param {string} name
 * @param {string | null} [value]
 * @param {Record<string, unknown>} [attributes]
 */
function textInput(name, value = '', attributes = {}) {
  const input = element('input', { name, type: 'text', autocomplete: 'off', spellcheck: 'false', ...attributes });
  input.value = value ?? '';
  return input;
}

/**
 * @param {string} name
 * @param {string[][]} options `[value, label]` pairs
 * @param {string} value
 */
function choice(name, options, value) {
  const select = element('select', { name });
  for (const [optionValue, label] of options) select.append(element('option', { value: optionValue }, label));
  select.value = value;
  return select;
}

/** @param {string} value */
function list(value) {
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/**
 * `YYYY-MM-DD` of a time, in local time, as the CLI reads dates.
 * @param {number | null | undefined} ms
 */
function dayText(ms) {
  if (ms === null || ms === undefined) return '';
  const date = new Date(ms);
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/**
 * The start of a local day, or its last second for a last valid day (`coffer add card --valid-to`).
 * @param {string} value
 * @param {boolean} endOfDay
 */
function dayTime(value, endOfDay) {
  if (!value) return null;
  const start = new Date(`${value}T00:00:00`).getTime();
  if (Number.isNaN(start)) throw new CofferError('invalid', 'a date is not YYYY-MM-DD');
  return endOfDay ? start + DAY - 1000 : start;
}

/**
 * The open form's scanning session, if any: stopped when the form closes, the app is hidden or locks.
 * @type {ScanSession | null}
 */
let scanning = null;

/** Turns the camera off; with `release`, the reader's worker ends too (the app locking). */
export function stopScanning({ release = false } = {}) {
  scanning?.stop();
  scanning = null;
  if (release) releaseReader();
}

/**
 * The Scan and Choose-a-photo controls, with the camera's picture and what was found. `apply(read)` puts a read
 * (`{ symbology, payload }`) into the form and returns what to say, or throws when the code is not for this form.
 * @param {HTMLFormElement} form
 * @param {{ first?: boolean }} options
 * @param {(read: Read) => string} apply
 */
function scanControls(form, { first = false }, apply) {
  const panel = element('div', { class: 'scan', id: 'scan' });
  const buttons = element('div', { class: 'row' });
  const camera = element('button', { type: 'button', id: 'scan-camera' }, 'Scan with the camera');
  const stop = element('button', { type: 'button', id: 'scan-stop', hidden: true }, 'Stop the camera');
  // A label that looks like a button opens the file picker; the input itself is kept out of sight, not out of reach.
  const photo = element('input', { type: 'file', accept: 'image/*', id: 'scan-photo', class: 'offscreen' });
  const photoLabel = element('label', { class: 'button', for: 'scan-photo' }, 'Choose a photo');
  buttons.append(camera, stop, photoLabel);
  const video = element('video', { id: 'scan-video', playsinline: true, muted: true, hidden: true });
  const status = element('p', { id: 'scan-status', class: 'small', 'aria-live': 'polite' });
  const choices = element('div', { id: 'scan-choices', class: 'row' });
  panel.append(buttons, photo, video, status, choices);
  // A new card is scanned before anything is typed: the controls come first.
  if (first) form.prepend(panel);
  else form.append(panel);

  /** @param {Read} read */
  const use = (read) => {
    choices.replaceChildren();
    try {
      status.textContent = apply(read);
    } catch (/** @type {any} */ error) {
      status.textContent = error.message;
    }
  };
  const cameraOff = () => {
    video.hidden = true;
    stop.hidden = true;
    camera.hidden = false;
  };
  const session = () => {
    stopScanning();
    scanning = new ScanSession({
      // The reader's time for each frame, as the page's other timings are kept (tests and benches read them).
      onFrame: (ms) => {
        const times = (document.body.dataset.scanMs ?? '').split(',').filter(Boolean).slice(-99);
        document.body.dataset.scanMs = [...times, ms.toFixed(2)].join(',');
      },
      onStatus: (message) => {
        status.textContent = message;
        if (!scanning?.stream) cameraOff();
      },
      onRead: (reads) => {
        cameraOff();
        if (reads.length === 1) {
          use(reads[0]);
          return;
        }
        // Several codes in one photo: the user picks, as `coffer add card --scan` asks in a terminal.
        status.textContent = `${reads.length} barcodes found: which one?`;
        choices.replaceChildren(...reads.map((read, index) => {
          const button = element('button', { type: 'button', 'data-choice': index }, `${read.symbology} ${shown(read.payload)}`);
          button.addEventListener('click', () => use(read));
          return button;
        }));
      },
    });
    return scanning;
  };
  camera.addEventListener('click', async () => {
    choices.replaceChildren();
    const current = session();
    video.hidden = false;
    camera.hidden = true;
    stop.hidden = false;
    try {
      await current.startCamera(video);
    } catch (/** @type {any} */ error) {
      cameraOff();
      status.textContent = error.message;
    }
  });
  stop.addEventListener('click', () => {
    stopScanning();
    cameraOff();
    status.textContent = '';
  });
  photo.addEventListener('change', async () => {
    const file = photo.files?.[0];
    photo.value = '';
    if (!file) return;
    choices.replaceChildren();
    cameraOff();
    try {
      await session().readPhoto(file);
    } catch (/** @type {any} */ error) {
      status.textContent = error.message;
    }
  });
}

/**
 * A payload as text for a button or a status line: printable, short.
 * @param {Uint8Array} payload
 */
function shown(payload) {
  const readable = decodedText(payload) ?? String.fromCharCode(...payload);
  const printable = readable.replace(/[\u0000-\u001f\u007f]/g, '·');
  return printable.length > 40 ? `${printable.slice(0, 39)}…` : printable;
}

/**
 * The payload as UTF-8 text, or null when it is not valid UTF-8.
 * @param {Uint8Array} payload
 */
function decodedText(payload) {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(payload);
  } catch {
    return null;
  }
}

/** @param {string | null} value */
function isTokenText(value) {
  return /^otpauth(-migration)?:\/\//i.test(value ?? '');
}

/** @param {Card | null} card */
function payloadText(card) {
  if (!card || card.payload_charset === 'binary') return '';
  return card.payload_charset === 'utf-8' ? text(card.payload) : String.fromCharCode(...card.payload);
}

/**
 * @param {HTMLFormElement} form
 * @param {(Card & Kept) | null} card
 * @param {EncoderExports | null} barcodes
 * @returns {(drawable: Drawable) => Writable}
 */
function cardForm(form, card, barcodes) {
  const name = field(form, 'Name', textInput('name', card?.name, { required: true, maxlength: 200 }));
  const symbology = field(form, 'Barcode', choice('symbology', [['', 'no barcode (shown by its number)'],
    ...SYMBOLOGIES.map((value) => [value, value])], card ? card.symbology ?? '' : 'code128'));
  const binary = card?.payload_charset === 'binary';
  const carried = element('small', { class: 'hint', id: 'editor-digits' });
  const payload = field(form, binary ? 'Payload (binary: change it with the CLI)' : 'Number or payload',
    textInput('payload', payloadText(card), { required: !binary, disabled: binary, inputmode: 'text' }), carried);
  const charset = field(form, 'Characters', choice('charset', [['utf-8', 'UTF-8'], ['iso-8859-1', 'ISO-8859-1']],
    card?.payload_charset === 'iso-8859-1' ? 'iso-8859-1' : 'utf-8'));
  charset.disabled = binary;
  const showDigits = () => {
    const shown = symbology.value && payload.value ? digits(barcodes, symbology.value, payloadBytes(payload.value, 'utf-8')) : null;
    carried.textContent = shown && shown !== payload.value ? `The barcode carries ${shown} (check digit added)` : '';
  };
  symbology.addEventListener('change', showDigits);
  payload.addEventListener('input', () => {
    try {
      showDigits();
    } catch {
      carried.textContent = '';
    }
  });
  showDigits();
  if (!binary) {
    scanControls(form, { first: true }, (read) => {
      const readable = decodedText(read.payload);
      if (isTokenText(readable)) {
        throw new CofferError('scan', `This ${read.symbology} code is a 2FA token, not a card: add it under Codes.`);
      }
      // A text field cannot hold line breaks; such a payload, like any other binary one, goes in with the CLI.
      if (read.payload.includes(10) || read.payload.includes(13)) {
        throw new CofferError('scan', `This ${read.symbology} code carries binary data: add the card with coffer add card --scan.`);
      }
      symbology.value = read.symbology;
      charset.value = readable === null ? 'iso-8859-1' : 'utf-8';
      payload.value = readable ?? String.fromCharCode(...read.payload);
      payload.dispatchEvent(new Event('input'));
      return `Found ${read.symbology} ${shown(read.payload)}.`;
    });
  }
  const number = field(form, 'Card number, if it differs (optional)', textInput('card_number', card?.card_number));
  const tags = field(form, 'Tags (comma-separated)', textInput('tags', card?.tags.join(', ')));
  const networks = field(form, 'Store networks (comma-separated ids, e.g. costco)', textInput('networks', card?.network_ids.join(', ')));
  const from = field(form, 'Valid from (optional)', element('input', { name: 'valid_from', type: 'date' }));
  from.value = dayText(card?.valid_from);
  const to = field(form, 'Last valid day (optional)', element('input', { name: 'valid_to', type: 'date' }));
  to.value = dayText(card?.valid_to);
  const oneTime = element('input', { name: 'one_time', type: 'checkbox' });
  oneTime.checked = Boolean(card?.one_time);
  field(form, 'One-time pass (a return code, a ticket)', oneTime).classList.add('check');
  const notes = field(form, 'Notes', element('textarea', { name: 'notes', rows: 3 }));
  notes.value = card?.notes ?? '';
  return (drawable) => checkCard({
    ...(card ?? { archived_at: null, metadata: {}, photos: [], unknown: [] }),
    name: name.value,
    symbology: symbology.value || null,
    // Only a card read from the vault is binary.
    payload: binary ? /** @type {Card} */ (card).payload : payloadBytes(payload.value, charset.value),
    payload_charset: binary ? 'binary' : charset.value,
    card_number: number.value.trim() || null,
    tags: list(tags.value),
    network_ids: list(networks.value),
    valid_from: dayTime(from.value, false),
    valid_to: dayTime(to.value, true),
    one_time: oneTime.checked,
    used_at: oneTime.checked ? card?.used_at ?? null : null,
    notes: notes.value || null,
  }, drawable);
}

/**
 * How a token is named in a list: "issuer (account)", or the account alone when it has no issuer.
 * @param {ExportedToken} token
 */
function tokenName(token) {
  if (!token.issuer) return token.account;
  return token.account && token.account !== token.issuer ? `${token.issuer} (${token.account})` : token.issuer;
}

/**
 * @param {HTMLFormElement} form
 * @param {(Token & Kept) | null} token
 * @returns {() => Writable | TokenDraft[]}
 */
function tokenForm(form, token) {
  /** @type {ParsedToken | null} */
  let parsed = null;
  // A Google Authenticator export scanned in: every token in it is added, as `coffer add otp --scan` does.
  /** @type {Migration | null} */
  let exported = null;
  const exportList = element('div', { id: 'editor-export', hidden: true });
  // A new token is pasted (or scanned) in; an edited one keeps its secret.
  const pasted = token ? null : field(form, 'otpauth:// link or secret key', element('textarea', { name: 'uri', rows: 3,
    required: true, autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off' }));
  /** @param {Migration} read */
  const showExport = (read) => {
    exported = read;
    const names = element('ul');
    names.append(...read.tokens.map((found) => element('li', {}, tokenName(found))));
    exportList.replaceChildren(element('p', {}, `This export holds ${read.tokens.length === 1 ? '1 token' : `${read.tokens.length} tokens`}:`), names);
    if (read.problems.length) {
      const problems = element('ul', { class: 'problems' });
      problems.append(...read.problems.map((problem) => element('li', {}, `${problem.entry}: ${problem.reason}`)));
      exportList.append(element('p', {}, 'Left out (Coffer cannot hold them):'), problems);
    }
    if (read.batch) {
      exportList.append(element('p', { class: 'hint' },
        `This is code ${read.batch.index} of ${read.batch.size}: save these, then add a token and scan the next code.`));
    }
    exportList.hidden = false;
    // The link, issuer and account belong to one token: an export names its own. (An export is scanned into a new
    // token's form, which has the link; each input is in its label.)
    for (const input of [/** @type {HTMLTextAreaElement} */ (pasted), issuer, account]) {
      /** @type {HTMLLabelElement} */ (input.closest('label')).hidden = true;
    }
  };
  if (pasted) {
    scanControls(form, {}, (read) => {
      const readable = decodedText(read.payload);
      if (!isTokenText(readable)) {
        throw new CofferError('scan', `This ${read.symbology} code is not a 2FA token: add it as a card.`);
      }
      // A token's text from here on (isTokenText).
      if (isMigrationURI(readable)) {
        const found = parseMigration(/** @type {string} */ (readable));
        if (!found.tokens.length) {
          throw new CofferError('scan', `This Google Authenticator export holds no token Coffer can add${found.problems.length
            ? ` (${found.problems.map((problem) => `${problem.entry}: ${problem.reason}`).join('; ')})` : ''}.`);
        }
        showExport(found);
        return `Found a Google Authenticator export: Save adds ${found.tokens.length === 1 ? 'its token' : `its ${found.tokens.length} tokens`}.`;
      }
      if (exported) {
        exported = null;
        exportList.hidden = true;
        for (const input of [pasted, issuer, account]) /** @type {HTMLLabelElement} */ (input.closest('label')).hidden = false;
      }
      pasted.value = /** @type {string} */ (readable);
      pasted.dispatchEvent(new Event('input'));
      return parsed ? `Found a token${parsed.issuer ? ` for ${parsed.issuer}` : ''}.` : pasted.validationMessage;
    });
  }
  form.append(exportList);
  const issuer = field(form, 'Issuer (the service)', textInput('issuer', token?.issuer));
  const account = field(form, 'Account', textInput('account', token?.account));
  const tags = field(form, 'Tags (comma-separated)', textInput('tags', token?.tags.join(', ')));
  if (pasted) {
    // Reading the link fills in who it is for; a bare secret leaves both for the user.
    pasted.addEventListener('input', () => {
      try {
        parsed = parseToken(pasted.value);
        if (parsed.issuer && !issuer.value) issuer.value = parsed.issuer;
        if (parsed.account && !account.value) account.value = parsed.account;
        pasted.setCustomValidity('');
      } catch (/** @type {any} */ error) {
        parsed = null;
        pasted.setCustomValidity(error.message);
      }
    });
  }
  return () => {
    if (exported) {
      return exported.tokens.map((found) => checkOTP({ ...found, notes: null, unknown: [], tags: list(tags.value) }));
    }
    // Without a token to edit, the form has the link.
    const source = token ?? parseToken(/** @type {HTMLTextAreaElement} */ (pasted).value);
    return checkOTP({ ...source, notes: token?.notes ?? null, unknown: token?.unknown ?? [],
      issuer: issuer.value, account: account.value || (token ? token.account : ''), tags: list(tags.value) });
  };
}

/**
 * @param {HTMLFormElement} form
 * @param {(Credential & Kept) | null} credential
 * @returns {() => Writable}
 */
function credentialForm(form, credential) {
  const name = field(form, 'Name', textInput('name', credential?.name, { required: true }));
  const provider = field(form, 'Provider (optional)', textInput('provider', credential?.provider));
  const value = field(form, 'Value', textInput('value', credential?.value, { type: 'password', required: true }));
  const username = field(form, 'User name (optional)', textInput('username', credential?.username));
  const url = field(form, 'URL (optional)', textInput('url', credential?.url, { type: 'url' }));
  const tags = field(form, 'Tags (comma-separated)', textInput('tags', credential?.tags.join(', ')));
  const notes = field(form, 'Notes', element('textarea', { name: 'notes', rows: 3 }));
  notes.value = credential?.notes ?? '';
  return () => checkCredential({ unknown: credential?.unknown ?? [], name: name.value, provider: provider.value.trim() || null,
    value: value.value, username: username.value || null, url: url.value || null, tags: list(tags.value),
    notes: notes.value || null });
}

/**
 * @param {HTMLFormElement} form
 * @param {(Note & Kept) | null} note
 * @returns {() => Writable}
 */
function noteForm(form, note) {
  const name = field(form, 'Name', textInput('name', note?.name, { required: true }));
  const template = field(form, 'Kind', choice('template', [['free', 'free text'], ['contact', 'contact'], ['kyc', 'identity (KYC)']],
    note?.template ?? 'free'));
  const rows = element('div', { class: 'note-fields' });
  const addRow = (label = '', value = '') => {
    const row = element('div', { class: 'row' });
    row.append(textInput('field_label', label, { placeholder: 'Label', 'aria-label': 'Field label' }),
      textInput('field_value', value, { placeholder: 'Value', 'aria-label': 'Field value' }));
    rows.append(row);
  };
  for (const entry of note?.fields ?? []) addRow(entry.label, entry.value);
  const more = element('button', { type: 'button' }, 'Add a field');
  more.addEventListener('click', () => addRow());
  form.append(rows, more);
  const body = field(form, 'Text', element('textarea', { name: 'text', rows: 5 }));
  body.value = note?.text ?? '';
  const tags = field(form, 'Tags (comma-separated)', textInput('tags', note?.tags.join(', ')));
  return () => checkNote({
    unknown: note?.unknown ?? [], name: name.value, template: template.value, text: body.value || null, tags: list(tags.value),
    // Each row is two text inputs (addRow).
    fields: [...rows.children].map((row) => ({ label: /** @type {HTMLInputElement} */ (row.children[0]).value,
      value: /** @type {HTMLInputElement} */ (row.children[1]).value }))
      .filter((entry) => entry.label.trim() || entry.value),
  });
}

/**
 * Each kind's form: given the item's content of that kind (or null for a new item), it returns the form's reader.
 * @type {Record<string, (form: HTMLFormElement, content: any, barcodes: EncoderExports | null)
 *   => (drawable: Drawable) => Writable | TokenDraft[]>}
 */
const FORMS = { card: cardForm, otp: tokenForm, credential: credentialForm, note: noteForm };
/** @type {Record<string, string>} */
const TITLES = { card: 'card', otp: 'token', credential: 'key', note: 'note' };

/**
 * Shows the form for a new item of `kind`, or for `item`, in `section`. `save(kind, content, id)` seals it, and
 * `saveAll(kind, contents)` several new ones read at once (a scanned token export);
 * `actions` are extra buttons (archive, delete, …) as `[label, run]`; `close()` is called when it is done.
 * @param {object} options
 * @param {HTMLElement} options.section
 * @param {string} options.kind
 * @param {import('./format.js').Item | null} [options.item]
 * @param {EncoderExports | null} options.barcodes
 * @param {(kind: string, content: Writable, id: string | null) => Promise<unknown>} options.save
 * @param {(kind: string, tokens: TokenDraft[]) => Promise<unknown>} options.saveAll
 * @param {Action[]} [options.actions]
 * @param {() => void} options.close
 * @param {(error: any) => void} options.fail
 */
export function openEditor({ section, kind, item = null, barcodes, save, saveAll, actions = [], close, fail }) {
  const form = element('form', { id: 'editor-form', autocomplete: 'off', novalidate: true });
  section.replaceChildren(element('h2', {}, `${item ? 'Edit' : 'New'} ${TITLES[kind]}`), form);
  const read = FORMS[kind](form, item?.content ?? null, barcodes);
  const buttons = element('div', { class: 'row buttons' });
  const submit = element('button', { type: 'submit', id: 'editor-save' }, 'Save');
  const cancel = element('button', { type: 'button', id: 'editor-cancel' }, 'Cancel');
  buttons.append(submit, cancel);
  for (const [label, run, id] of actions) {
    const button = element('button', { type: 'button', id }, label);
    button.addEventListener('click', async () => {
      try {
        await run();
        close();
      } catch (error) {
        fail(error);
      }
    });
    buttons.append(button);
  }
  form.append(buttons);
  cancel.addEventListener('click', close);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      const content = read((symbology, payload, charset) => {
        if (!barcodes) throw new CofferError('barcode', 'the barcode encoder is not loaded');
        encode(barcodes, symbology, payload, charset);
      });
      // A form that read several items at once (a token export) adds them together.
      if (Array.isArray(content)) await saveAll(kind, content);
      else await save(kind, content, item?.id ?? null);
      close();
    } catch (error) {
      submit.disabled = false;
      fail(error);
    }
  });
  /** @type {HTMLElement | null} */ (form.querySelector('input:not([type=file]), textarea'))?.focus();
}
