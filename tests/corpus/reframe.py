"""Writes a glTF rig again with its joints' local frames turned: the same figure, the same motion
(Python 3 standard library only; used by tests/joint_frames.rs, see README.md).

  python3 tests/corpus/reframe.py IN.glb|.gltf OUT.glb MODE SEED
      MODE axis: one quarter-turn rotation (axes onto axes, one of 23) for every joint, as a writer
                 in another axis convention writes the same rig (bones along X instead of Y);
      MODE any:  a random rotation per joint name, at any angle (no convention at all).

Every node's rotation R becomes Qp^-1 R Qn and its translation Qp^-1 t (Qp its parent's turn, Qn
its own; identity for nodes that are not turned); rotation and translation keys likewise; each
turned joint's inverse bind matrix becomes Qn^-1 IBM. Every node's world transform and every
skinned vertex stay where they were, at every time of every animation. Joints under a scale that
is not uniform keep their frame (a turn does not pass through it), and so do joints whose inverse
bind matrix is an identity binding no vertex (a writer's placeholder, as Sketchfab's
`GLTF_created_0_rootJoint`); a joint name kept anywhere is kept everywhere, so that copies of an
armature (clips keyed on another armature's joints of the same names) keep one frame per name.
Writes one GLB with every buffer merged into its binary chunk; external images are dropped (no
skeleton reads them). Exit 3 names a file the tool does not rewrite (VRM and VRM Animation files,
whose specifications fix the rest frames; missing buffers).
"""
import base64
import itertools
import json
import math
import os
import random
import struct
import sys
from urllib.parse import unquote

from joints import mat_mul, quat_mat, read_gltf


def skip(why):
    print(f"skip: {why}")
    sys.exit(3)


# Quaternions are (x, y, z, w) tuples; matrices row-major lists.
def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def qinv(q):
    return (-q[0], -q[1], -q[2], q[3])


def rotate(q, v):
    m = quat_mat(q)
    return [sum(m[r][c] * v[c] for c in range(3)) for r in range(3)]


def quat_of(m):
    """The unit quaternion of rotation matrix `m`, from its largest diagonal term (exact for
    half turns, where the off-diagonal differences vanish)."""
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > 0:
        s = 2 * math.sqrt(1 + trace)
        q = ((m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4)
    else:
        i = max(range(3), key=lambda k: m[k][k])
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2 * math.sqrt(1 + m[i][i] - m[j][j] - m[k][k])
        v = [0.0, 0.0, 0.0]
        v[i] = s / 4
        v[j] = (m[j][i] + m[i][j]) / s
        v[k] = (m[k][i] + m[i][k]) / s
        q = (v[0], v[1], v[2], (m[k][j] - m[j][k]) / s)
    n = math.sqrt(sum(c * c for c in q))
    return tuple(c / n for c in q)


def quarter_turns():
    """The 23 rotations other than the identity that take every axis onto an axis."""
    turns = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = [[0.0] * 3 for _ in range(3)]
            for r, c in enumerate(perm):
                m[r][c] = float(signs[r])
            det = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                   - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                   + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))
            if det > 0 and m != [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]:
                turns.append(quat_of(m))
    return turns


def mat4_of(q):
    m = quat_mat(q)
    return [m[0] + [0.0], m[1] + [0.0], m[2] + [0.0], [0.0, 0.0, 0.0, 1.0]]


COMPONENTS = {'SCALAR': 1, 'VEC2': 2, 'VEC3': 3, 'VEC4': 4, 'MAT4': 16}
TYPES = {5120: ('b', 1, 127.0), 5121: ('B', 1, 255.0), 5122: ('h', 2, 32767.0),
         5123: ('H', 2, 65535.0), 5125: ('I', 4, None), 5126: ('f', 4, None)}


class Rewrite:
    def __init__(self, path):
        self.doc, binary = read_gltf(path)
        doc = self.doc
        extensions = doc.get('extensions', {})
        if any(k in extensions for k in ('VRM', 'VRMC_vrm', 'VRMC_vrm_animation')):
            skip("a VRM or VRM Animation file: its specification fixes the rest frames")
        blobs = []
        for b in doc.get('buffers', []):
            uri = b.get('uri')
            if uri is None:
                if binary is None:
                    skip("a buffer without a binary chunk")
                blobs.append(bytes(binary))
            elif uri.startswith('data:'):
                blobs.append(base64.b64decode(uri.split(',', 1)[1]))
            else:
                p = os.path.join(os.path.dirname(path), unquote(uri))
                if not os.path.exists(p):
                    skip(f"buffer `{uri}` is missing")
                blobs.append(open(p, 'rb').read())
        self.data = bytearray()
        starts = []
        for blob in blobs:
            while len(self.data) % 16:
                self.data.append(0)
            starts.append(len(self.data))
            self.data += blob
        for view in doc.get('bufferViews', []):
            view['byteOffset'] = view.get('byteOffset', 0) + starts[view['buffer']]
            view['buffer'] = 0
        if any('uri' in im and not im['uri'].startswith('data:') for im in doc.get('images', [])):
            for key in ('images', 'textures', 'samplers'):
                doc.pop(key, None)
            for material in doc.get('materials', []):
                for holder in (material, material.get('pbrMetallicRoughness', {})):
                    for key in [k for k in holder if k.endswith('Texture')]:
                        holder.pop(key)
                material.pop('extensions', None)

    def read(self, index):
        a = self.doc['accessors'][index]
        n = COMPONENTS[a['type']]
        fmt, size, norm = TYPES[a['componentType']]
        rows = [[0.0] * n for _ in range(a['count'])]
        if a.get('bufferView') is not None:
            view = self.doc['bufferViews'][a['bufferView']]
            stride = view.get('byteStride') or size * n
            start = view.get('byteOffset', 0) + a.get('byteOffset', 0)
            for k in range(a['count']):
                rows[k] = list(struct.unpack_from('<' + fmt * n, self.data, start + k * stride))
        sparse = a.get('sparse')
        if sparse:
            iv = self.doc['bufferViews'][sparse['indices']['bufferView']]
            ifmt, isize, _ = TYPES[sparse['indices']['componentType']]
            vv = self.doc['bufferViews'][sparse['values']['bufferView']]
            i0 = iv.get('byteOffset', 0) + sparse['indices'].get('byteOffset', 0)
            v0 = vv.get('byteOffset', 0) + sparse['values'].get('byteOffset', 0)
            for k in range(sparse['count']):
                at = struct.unpack_from('<' + ifmt, self.data, i0 + k * isize)[0]
                rows[at] = list(struct.unpack_from('<' + fmt * n, self.data, v0 + k * size * n))
        if norm and a.get('normalized'):
            rows = [[max(v / norm, -1.0) for v in row] for row in rows]
        return rows

    def append(self, rows, kind):
        while len(self.data) % 4:
            self.data.append(0)
        start = len(self.data)
        for row in rows:
            self.data += struct.pack('<' + 'f' * len(row), *row)
        self.doc['bufferViews'].append(
            {'buffer': 0, 'byteOffset': start, 'byteLength': len(self.data) - start})
        accessor = {'bufferView': len(self.doc['bufferViews']) - 1, 'componentType': 5126,
                    'count': len(rows), 'type': kind}
        if kind == 'SCALAR':
            accessor['min'] = [min(r[0] for r in rows)]
            accessor['max'] = [max(r[0] for r in rows)]
        self.doc['accessors'].append(accessor)
        return len(self.doc['accessors']) - 1

    def bound(self, skin):
        """Indices into `skin`'s joints that bind a vertex; None when weights cannot be read."""
        out = set()
        for node in self.doc.get('nodes', []):
            if node.get('skin') != skin or 'mesh' not in node:
                continue
            for primitive in self.doc['meshes'][node['mesh']]['primitives']:
                attributes = primitive.get('attributes', {})
                for k in itertools.count():
                    if f'JOINTS_{k}' not in attributes:
                        break
                    ja, wa = attributes[f'JOINTS_{k}'], attributes[f'WEIGHTS_{k}']
                    if any(self.doc['accessors'][i].get('bufferView') is None for i in (ja, wa)):
                        return None
                    for js, ws in zip(self.read(ja), self.read(wa)):
                        out.update(int(j) for j, w in zip(js, ws) if w > 0)
        return out

    def write(self, path):
        while len(self.data) % 4:
            self.data.append(0)
        self.doc['buffers'] = [{'byteLength': len(self.data)}]
        text = json.dumps(self.doc, separators=(',', ':')).encode('utf-8')
        while len(text) % 4:
            text += b' '
        total = 12 + 8 + len(text) + 8 + len(self.data)
        with open(path, 'wb') as f:
            f.write(struct.pack('<III', 0x46546C67, 2, total))
            f.write(struct.pack('<II', len(text), 0x4E4F534A) + text)
            f.write(struct.pack('<II', len(self.data), 0x004E4942) + bytes(self.data))


def uniform(scale):
    s = scale[0]
    return all(abs(c - s) <= 1e-6 * max(1.0, abs(s)) for c in scale) and s > 0


def reframe(src, out, mode, seed):
    rw = Rewrite(src)
    doc = rw.doc
    nodes = doc.get('nodes', [])
    parent = [None] * len(nodes)
    for i, node in enumerate(nodes):
        for c in node.get('children', []):
            parent[c] = i
    joints = {j for skin in doc.get('skins', []) for j in skin['joints']}

    kept = set()
    for i, node in enumerate(nodes):
        if 'matrix' in node:
            m = node['matrix']
            columns = [math.sqrt(sum(m[4 * c + r] ** 2 for r in range(3))) for c in range(3)]
            det = (m[0] * (m[5] * m[10] - m[6] * m[9]) - m[4] * (m[1] * m[10] - m[2] * m[9])
                   + m[8] * (m[1] * m[6] - m[2] * m[5]))
            if not uniform(columns) or det < 0:
                kept.add(i)
        elif not uniform(node.get('scale', [1, 1, 1])):
            kept.add(i)
    for animation in doc.get('animations', []):
        for channel in animation['channels']:
            target = channel['target']
            if target.get('path') == 'scale' and 'node' in target:
                keys = rw.read(animation['samplers'][channel['sampler']]['output'])
                if not all(uniform(k[:3]) for k in keys):
                    kept.add(target['node'])
    for s, skin in enumerate(doc.get('skins', [])):
        if 'inverseBindMatrices' not in skin:
            continue
        bound = rw.bound(s)
        for k, (j, m) in enumerate(zip(skin['joints'], rw.read(skin['inverseBindMatrices']))):
            identity = all(abs(m[e] - (1.0 if e % 5 == 0 else 0.0)) <= 1e-6 for e in range(16))
            if identity and (bound is None or k not in bound):
                kept.add(j)
    kept_names = {nodes[i].get('name') for i in kept if nodes[i].get('name')}

    rng = random.Random(seed)
    if mode == 'axis':
        turns = quarter_turns()
        one = turns[seed % len(turns)]
    elif mode != 'any':
        sys.exit(f"unknown mode {mode}")
    by_name = {}
    turn = {}
    for i in sorted(joints):
        name = nodes[i].get('name') or f'#{i}'
        if i in kept or name in kept_names:
            continue
        if mode == 'axis':
            turn[i] = one
        else:
            if name not in by_name:
                axis = [rng.gauss(0, 1) for _ in range(3)]
                length = math.sqrt(sum(a * a for a in axis))
                angle = math.radians(rng.uniform(-180, 180))
                s = math.sin(angle / 2) / length
                by_name[name] = (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))
            turn[i] = by_name[name]

    identity = (0.0, 0.0, 0.0, 1.0)
    own = lambda i: turn.get(i, identity)
    above = lambda i: turn.get(parent[i], identity) if parent[i] is not None else identity
    changed = lambda i: i in turn or (parent[i] is not None and parent[i] in turn)

    for i, node in enumerate(nodes):
        if not changed(i):
            continue
        a, b = qinv(above(i)), own(i)
        if 'matrix' in node:
            m = node['matrix']
            rows = [[m[4 * c + r] for c in range(4)] for r in range(4)]
            rows = mat_mul(mat_mul(mat4_of(a), rows), mat4_of(b))
            node['matrix'] = [rows[r][c] for c in range(4) for r in range(4)]
        else:
            node['rotation'] = list(qmul(qmul(a, tuple(node.get('rotation', identity))), b))
            if 'translation' in node:
                node['translation'] = rotate(a, node['translation'])

    for animation in doc.get('animations', []):
        samplers = list(animation['samplers'])
        for channel in animation['channels']:
            target = channel['target']
            i = target.get('node')
            if i is None or target.get('path') not in ('rotation', 'translation') or not changed(i):
                continue
            sampler = dict(animation['samplers'][channel['sampler']])
            keys = rw.read(sampler['output'])
            a, b = qinv(above(i)), own(i)
            if target['path'] == 'rotation':
                # Linear in the quaternion: cubic-spline tangents turn alike.
                keys = [list(qmul(qmul(a, tuple(k)), b)) for k in keys]
                sampler['output'] = rw.append(keys, 'VEC4')
            else:
                sampler['output'] = rw.append([rotate(a, k) for k in keys], 'VEC3')
            samplers.append(sampler)
            channel['sampler'] = len(samplers) - 1
        animation['samplers'] = samplers

    for skin in doc.get('skins', []):
        if 'inverseBindMatrices' not in skin:
            continue
        matrices = []
        for j, m in zip(skin['joints'], rw.read(skin['inverseBindMatrices'])):
            if j in turn:
                rows = [[m[4 * c + r] for c in range(4)] for r in range(4)]
                rows = mat_mul(mat4_of(qinv(turn[j])), rows)
                m = [rows[r][c] for c in range(4) for r in range(4)]
            matrices.append(m)
        skin['inverseBindMatrices'] = rw.append(matrices, 'MAT4')

    rw.write(out)
    print(f"{len(turn)} joints turned, {len(joints) - len(turn)} kept")


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    reframe(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
