/**
 * What a failed compute event stores (`traceback.format_tb` text and `details`), shown to
 * admins by os-instance-actions. The detach failure is the one nova-26/06 recorded (Nova 26.2.2,
 * python 3.11, Debian paths). The attach failure was not recorded: its frames follow Nova
 * 26.2.2's code path for a Cinder attachment update that answered 500 (cinderclient's
 * `ClientException`, a non-Nova exception, so `details` is the class name); cinderclient's own
 * frames are left out.
 */
import type { EventFailure } from './instance-actions';

const PY = '/usr/lib/python3/dist-packages';

/**
 * One `format_tb` frame: the File line, the source line and, when the failing expression is not
 * the whole line, Python 3.11's caret line under it (`under`).
 */
function frame(file: string, line: number, fn: string, code: string, under?: string): string {
  const caret = under === undefined ? '' : `${' '.repeat(4 + code.indexOf(under))}${'^'.repeat(under.length)}\n`;
  return `  File "${PY}/${file}", line ${line}, in ${fn}\n    ${code}\n${caret}`;
}

/** wrap_instance_event → wrap_instance_fault (re-raised) → the decorated manager method. */
const DECORATORS = [
  frame(
    'nova/compute/utils.py',
    1439,
    'decorated_function',
    'return function(self, context, *args, **kwargs)',
    'function(self, context, *args, **kwargs)',
  ),
  frame('nova/compute/manager.py', 211, 'decorated_function', 'with excutils.save_and_reraise_exception():'),
  frame('oslo_utils/excutils.py', 227, '__exit__', 'self.force_reraise()'),
  frame('oslo_utils/excutils.py', 200, 'force_reraise', 'raise self.value'),
  frame(
    'nova/compute/manager.py',
    201,
    'decorated_function',
    'return function(self, context, *args, **kwargs)',
    'function(self, context, *args, **kwargs)',
  ),
].join('');

const RERAISE = [
  frame('oslo_utils/excutils.py', 227, '__exit__', 'self.force_reraise()'),
  frame('oslo_utils/excutils.py', 200, 'force_reraise', 'raise self.value'),
].join('');

/** nova-26/06: `_delete_disk_metadata` on an instance without device metadata (AttributeError). */
export const DETACH_FAILURE: Readonly<EventFailure> = Object.freeze({
  details: 'AttributeError',
  traceback: [
    DECORATORS,
    frame(
      'nova/compute/manager.py',
      7495,
      'detach_volume',
      'do_detach_volume(context, volume_id, instance, attachment_id)',
    ),
    frame('oslo_concurrency/lockutils.py', 414, 'inner', 'return f(*args, **kwargs)', 'f(*args, **kwargs)'),
    frame('nova/compute/manager.py', 7492, 'do_detach_volume', 'self._detach_volume(context, bdm, instance,'),
    frame('nova/compute/manager.py', 7456, '_detach_volume', 'self._delete_disk_metadata(instance, bdm)'),
    frame(
      'nova/compute/manager.py',
      7461,
      '_delete_disk_metadata',
      'for device in instance.device_metadata.devices:',
      'instance.device_metadata.devices',
    ),
  ].join(''),
});

/** Not recorded: the connect step's attachment update failed in Cinder (500 → ClientException). */
export const ATTACH_FAILURE: Readonly<EventFailure> = Object.freeze({
  details: 'ClientException',
  traceback: [
    DECORATORS,
    frame('nova/compute/manager.py', 7334, 'attach_volume', 'do_attach_volume(context, instance, driver_bdm)'),
    frame('oslo_concurrency/lockutils.py', 414, 'inner', 'return f(*args, **kwargs)', 'f(*args, **kwargs)'),
    frame('nova/compute/manager.py', 7331, 'do_attach_volume', 'with excutils.save_and_reraise_exception():'),
    RERAISE,
    frame(
      'nova/compute/manager.py',
      7329,
      'do_attach_volume',
      'return self._attach_volume(context, instance, driver_bdm)',
      'self._attach_volume(context, instance, driver_bdm)',
    ),
    frame('nova/compute/manager.py', 7351, '_attach_volume', 'with excutils.save_and_reraise_exception():'),
    RERAISE,
    frame(
      'nova/compute/manager.py',
      7348,
      '_attach_volume',
      'bdm.attach(context, instance, self.volume_api, self.driver,',
    ),
    frame(
      'nova/virt/block_device.py',
      46,
      'wrapped',
      'ret_val = method(obj, context, *args, **kwargs)',
      'method(obj, context, *args, **kwargs)',
    ),
    frame('nova/virt/block_device.py', 734, 'attach', 'self._do_attach(context, instance, volume, volume_api,'),
    frame('nova/virt/block_device.py', 719, '_do_attach', 'self._volume_attach(context, volume, connector, instance,'),
    frame('nova/virt/block_device.py', 633, '_volume_attach', 'connection_info = volume_api.attachment_update('),
    frame(
      'nova/volume/cinder.py',
      397,
      'wrapper',
      'res = method(self, ctx, *args, **kwargs)',
      'method(self, ctx, *args, **kwargs)',
    ),
    frame(
      'nova/volume/cinder.py',
      451,
      'wrapper',
      'res = method(self, ctx, attachment_id, *args, **kwargs)',
      'method(self, ctx, attachment_id, *args, **kwargs)',
    ),
    frame('nova/volume/cinder.py', 875, 'attachment_update', 'attachment_ref = cinderclient('),
  ].join(''),
});
