"""Prints a rig's joint tree with joint positions, to check an expectation by hand
(Python 3 standard library only; see README.md).

  python3 tests/corpus/joints.py FILE.glb|.gltf|.vrm|.vrma
      every node: J = skin joint, M = has a mesh; world position from the nodes'
      TRS/matrix; [bind x y z] from the inverse bind matrices when a skin has
      them (x100, the rest the mesh was modelled in); <bone> = the file's own
      VRM / VRMC_vrm / VRMC_vrm_animation humanoid bone for that node.
  python3 tests/corpus/joints.py FILE.bvh [--frame N]
      every joint and End Site: summed OFFSETs (the zero pose), or with --frame
      the world positions of frame N (forward kinematics of its channels).
"""
import base64
import json
import math
import os
import struct
import sys


def mat_mul(a, b):
    n = len(b[0])
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(n)] for i in range(len(a))]


def quat_mat(q):
    x, y, z, w = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def node_matrix(n):
    if 'matrix' in n:
        m = n['matrix']
        return [[m[c * 4 + r] for c in range(4)] for r in range(4)]
    t = n.get('translation', [0, 0, 0])
    r = quat_mat(n.get('rotation', [0, 0, 0, 1]))
    s = n.get('scale', [1, 1, 1])
    return [[r[i][0] * s[0], r[i][1] * s[1], r[i][2] * s[2], t[i]] for i in range(3)] + [[0, 0, 0, 1]]


def read_gltf(path):
    data = open(path, 'rb').read()
    if data[:4] != b'glTF':
        return json.loads(data), None
    length = struct.unpack('<I', data[12:16])[0]
    doc = json.loads(data[20:20 + length])
    rest = data[20 + length:]
    binary = rest[8:8 + struct.unpack('<I', rest[:4])[0]] if len(rest) >= 8 else None
    return doc, binary


def bind_positions(doc, binary, path):
    """Joint -> world position at bind (the inverse of its inverse bind matrix)."""
    def buffer(i):
        b = doc['buffers'][i]
        if 'uri' not in b:
            return binary
        if b['uri'].startswith('data:'):
            return base64.b64decode(b['uri'].split(',', 1)[1])
        return open(os.path.join(os.path.dirname(path), b['uri']), 'rb').read()

    out = {}
    for skin in doc.get('skins', []):
        if 'inverseBindMatrices' not in skin:
            continue
        a = doc['accessors'][skin['inverseBindMatrices']]
        view = doc['bufferViews'][a['bufferView']]
        start = view.get('byteOffset', 0) + a.get('byteOffset', 0)
        floats = struct.unpack_from('<%df' % (16 * a['count']), buffer(view['buffer']), start)
        for k, joint in enumerate(skin['joints']):
            m = floats[16 * k:16 * k + 16]
            rot = [[m[c * 4 + r] for c in range(3)] for r in range(3)]
            t = [m[12], m[13], m[14]]
            det = (rot[0][0] * (rot[1][1] * rot[2][2] - rot[1][2] * rot[2][1])
                   - rot[0][1] * (rot[1][0] * rot[2][2] - rot[1][2] * rot[2][0])
                   + rot[0][2] * (rot[1][0] * rot[2][1] - rot[1][1] * rot[2][0]))
            inv = [[(rot[(j + 1) % 3][(i + 1) % 3] * rot[(j + 2) % 3][(i + 2) % 3]
                     - rot[(j + 1) % 3][(i + 2) % 3] * rot[(j + 2) % 3][(i + 1) % 3]) / det
                    for j in range(3)] for i in range(3)]
            out.setdefault(joint, [-sum(inv[r][c] * t[c] for c in range(3)) for r in range(3)])
    return out


def humanoid_bones(doc):
    ext = doc.get('extensions', {})
    bones = {}
    if 'VRMC_vrm' in ext:
        bones = {v['node']: b for b, v in ext['VRMC_vrm']['humanoid']['humanBones'].items()}
    elif 'VRM' in ext:
        bones = {v.get('node'): v.get('bone') for v in ext['VRM']['humanoid']['humanBones']}
    elif 'VRMC_vrm_animation' in ext:
        human = ext['VRMC_vrm_animation'].get('humanoid', {}).get('humanBones', {})
        bones = {v['node']: b for b, v in human.items()}
    return bones


def gltf(path):
    doc, binary = read_gltf(path)
    nodes = doc.get('nodes', [])
    parent = {c: i for i, n in enumerate(nodes) for c in n.get('children', [])}
    joints = {j for s in doc.get('skins', []) for j in s['joints']}
    bind = bind_positions(doc, binary, path)
    human = humanoid_bones(doc)
    world = {}

    def world_of(i):
        if i not in world:
            local = node_matrix(nodes[i])
            world[i] = mat_mul(world_of(parent[i]), local) if i in parent else local
        return world[i]

    def show(i, depth):
        m = world_of(i)
        tag = ('J' if i in joints else ' ') + ('M' if 'mesh' in nodes[i] else ' ')
        line = '%s%s %s [%d] (%+.3f %+.3f %+.3f)' % (
            '  ' * depth, tag, nodes[i].get('name', '?'), i, m[0][3], m[1][3], m[2][3])
        if i in bind:
            line += ' [bind %+.1f %+.1f %+.1f]' % tuple(100 * v for v in bind[i])
        if i in human:
            line += '  <%s>' % human[i]
        print(line)
        for c in nodes[i].get('children', []):
            show(c, depth + 1)

    for i in range(len(nodes)):
        if i not in parent:
            show(i, 0)


def axis_rotation(axis, degrees):
    a = math.radians(degrees)
    c, s = math.cos(a), math.sin(a)
    return {'X': [[1, 0, 0], [0, c, -s], [0, s, c]],
            'Y': [[c, 0, s], [0, 1, 0], [-s, 0, c]],
            'Z': [[c, -s, 0], [s, c, 0], [0, 0, 1]]}[axis]


def bvh(path, frame):
    head, motion = open(path).read().split('MOTION', 1)
    tokens = head.split()
    joints, stack, current, i = [], [], None, 0
    while i < len(tokens):
        t = tokens[i]
        if t in ('ROOT', 'JOINT', 'End'):
            name = tokens[i + 1] if t != 'End' else joints[stack[-1]]['name'] + '/End'
            joints.append({'name': name, 'parent': stack[-1] if stack else None, 'channels': []})
            current = len(joints) - 1
            i += 2
            continue
        if t == '{':
            stack.append(current)
        elif t == '}':
            stack.pop()
        elif t == 'OFFSET':
            joints[current]['offset'] = [float(v) for v in tokens[i + 1:i + 4]]
            i += 4
            continue
        elif t == 'CHANNELS':
            n = int(tokens[i + 1])
            joints[current]['channels'] = tokens[i + 2:i + 2 + n]
            i += 2 + n
            continue
        i += 1
    values = [float(v) for v in motion.strip().split('\n')[2 + frame].split()] if frame is not None else None
    k, placed, depth = 0, [], {}
    for n, j in enumerate(joints):
        position, rotation = list(j['offset']), [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        for channel in j['channels']:
            if values is not None:
                if channel.endswith('position'):
                    if j['parent'] is None:
                        position['XYZ'.index(channel[0])] += values[k]
                else:
                    rotation = mat_mul(rotation, axis_rotation(channel[0], values[k]))
            k += 1
        if j['parent'] is None:
            placed.append((rotation, position))
        else:
            parent_rotation, parent_position = placed[j['parent']]
            moved = [sum(parent_rotation[r][c] * position[c] for c in range(3)) for r in range(3)]
            placed.append((mat_mul(parent_rotation, rotation),
                           [parent_position[r] + moved[r] for r in range(3)]))
        depth[n] = 0 if j['parent'] is None else depth[j['parent']] + 1
        print('%s%s (%+.2f %+.2f %+.2f)' % ('  ' * depth[n], j['name'], *placed[n][1]))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    file = sys.argv[1]
    if file.lower().endswith('.bvh'):
        bvh(file, int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == '--frame' else None)
    else:
        gltf(file)
