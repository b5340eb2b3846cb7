// composer.js: the message box. Enter sends, Shift+Enter makes a new
// line, Esc cancels the running turn. Enter that confirms an input
// method's composition (Chinese, Japanese, Korean...) only confirms it:
// it must not send half a sentence.

// bindComposer wires a textarea; onSend() sends, onCancel() cancels.
export function bindComposer(ta, { onSend, onCancel }) {
  let composing = false;
  ta.addEventListener('compositionstart', () => {
    composing = true;
  });
  ta.addEventListener('compositionend', () => {
    // Safari ends the composition before the keydown of the Enter that
    // ended it; clearing the flag a task later covers that order too.
    setTimeout(() => {
      composing = false;
    }, 0);
  });
  ta.addEventListener('keydown', (e) => {
    if (e.isComposing || composing) return;
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      onSend();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      onCancel();
    }
  });
  ta.addEventListener('input', () => grow(ta));
  return {
    isComposing: () => composing,
  };
}

// grow fits the textarea's height to its text, up to the CSS max-height.
export function grow(ta) {
  ta.style.height = 'auto';
  ta.style.height = ta.scrollHeight + 'px';
}
